"""`nanograd completion SHELL`: the script that makes bash, zsh or fish complete nanograd."""

from __future__ import annotations

import click
from click.shell_completion import FishComplete, ShellComplete, get_completion_class

SHELLS = ("bash", "zsh", "fish")
# What the scripts ask the command for, in the environment: click's protocol.
COMPLETE_VAR = "_NANOGRAD_COMPLETE"


class WholeFish(FishComplete):
    """fish's completion as click's, but a description is kept whole: click's script splits
    each reply at every comma, and fish showed a description up to its first comma."""

    name = "fish"
    source_template = FishComplete.source_template.replace(
        'string split "," $completion', 'string split -m 1 "," $completion'
    )


def completion_class(shell: str) -> type[ShellComplete]:
    """The completion of `shell`: click's, but fish's, which keeps descriptions whole."""
    return WholeFish if shell == "fish" else get_completion_class(shell)  # type: ignore[return-value]


EXAMPLES = """
\b
Examples:
  eval "$(nanograd completion bash)"    # in ~/.bashrc (each line in a start-up file)
  eval "$(nanograd completion zsh)"     # in ~/.zshrc
  nanograd completion fish > ~/.config/fish/completions/nanograd.fish
"""


@click.command(epilog=EXAMPLES, short_help="Print the script that completes nanograd in a shell.")
@click.argument("shell", type=click.Choice(SHELLS), metavar="SHELL")
def completion(shell: str) -> None:
    """Print the script that makes SHELL (bash, zsh or fish) complete nanograd's commands,
    options and a source's inputs."""
    from . import cli

    script = completion_class(shell)(cli, {}, "nanograd", COMPLETE_VAR).source()
    click.echo(script, nl=not script.endswith("\n"))
