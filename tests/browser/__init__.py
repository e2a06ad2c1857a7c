"""Real-browser tests. A package, so that its conftest.py does not shadow tests/conftest.py
(the unit tests do `from conftest import operands`)."""
