"""`python -m minirag` is the `minirag` command."""

from minirag.cli import main

raise SystemExit(main())
