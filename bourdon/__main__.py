"""``python -m bourdon`` is the ``bourdon`` command."""

from bourdon.cli.main import main

raise SystemExit(main())
