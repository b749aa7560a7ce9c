"""python -m nanograd_cli"""

from .cli import command

command()
