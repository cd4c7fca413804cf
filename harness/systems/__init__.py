"""Systems under test other than the engine, one folder each (DESIGN.md "Systems under test")."""
