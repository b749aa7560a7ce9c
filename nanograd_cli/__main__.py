"""python -m nanograd_cli"""

from .cli import main

main()
