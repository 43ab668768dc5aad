"""Generators of realistic native stores, one module per agent, for tests and benchmarks.

Each module exposes ``write_store(home: Path, *, seed: int = 0, ...) -> StoreFixture`` that
writes a deterministic store under a virtual home (never the real one), including the messy
cases of native-stores.md section 10.3. Golden manifests for the fixtures live under
``tests/golden/``. ``database`` is no generator: it holds the checks every reader of a SQLite
store kept beside older JSON files shares (goose, OpenCode), each test file giving its own cases.
"""
