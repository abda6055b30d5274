"""``python -m function``: serve the composition function."""

from function.cli import main

main()
