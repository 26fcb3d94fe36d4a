"""`python -m actlab` is the same as the `actlab` command."""

import sys

from actlab.cli import main

sys.exit(main())
