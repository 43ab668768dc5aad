"""``python -m bourdon`` is the ``bourdon`` command."""

from bourdon.cli import main

raise SystemExit(main())
