import sys

from tensorlint.cli import main

sys.exit(main())
