"""``python -m halls`` serves on the defaults, as ``halls serve`` does."""

import sys

from halls.cli import main

if __name__ == "__main__":
    main(args=sys.argv[1:] or ["serve"], prog_name="halls")
