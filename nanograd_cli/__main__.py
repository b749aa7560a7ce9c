"""python -m nanograd_cli"""

from ._entry import command

command()
