"""`python -m tensorlint`: the command line."""

import sys

from tensorlint.cli import main

sys.exit(main())
