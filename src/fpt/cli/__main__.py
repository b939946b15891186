import sys

from fpt.cli import main

sys.exit(main())
