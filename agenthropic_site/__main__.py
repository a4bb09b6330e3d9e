"""Run the command line as `python -m agenthropic_site`."""

import sys

from agenthropic_site.entry import main

if __name__ == "__main__":  # not when a render worker process imports it
    sys.exit(main())
