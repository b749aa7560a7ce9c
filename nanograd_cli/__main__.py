"""python -m nanograd_cli"""

from ._cli import command

command()
