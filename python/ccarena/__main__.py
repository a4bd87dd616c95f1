"""`python -m ccarena` is the `ccarena` command."""

import sys

from .cli import main

sys.exit(main())
