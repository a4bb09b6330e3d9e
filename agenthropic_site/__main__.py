"""Run the command line as `python -m agenthropic_site`."""

import sys

from agenthropic_site.entry import main

sys.exit(main())
