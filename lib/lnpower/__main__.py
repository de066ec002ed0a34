"""``python -m lnpower``: the command line (:mod:`lnpower.cli`)."""

import sys

from .cli import main

sys.exit(main())
