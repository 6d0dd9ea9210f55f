"""``python -m simple_a2a.cli``: the ``simple-a2a`` command."""

from simple_a2a.cli import main

if __name__ == "__main__":
    main()
