"""Worked solutions to the notebooks' exercises, for teachers. tests/test_solutions.py runs every one."""
