"""Run the command line as `python -m agenthropic_site`."""

import sys

from agenthropic_site.cli import main

sys.exit(main())
