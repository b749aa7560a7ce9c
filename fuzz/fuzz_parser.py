"""Coverage-guided fuzzing of the parser and the engine with atheris.

Run: bash fuzz/run.sh [SECONDS]   (installs atheris into the current environment)

Every input is decoded as UTF-8 (invalid bytes are replaced), parsed, and, when it parses,
evaluated and differentiated with every input at 0.5. Anything but a result or one of the
library's own errors is a crash that atheris reports with the input that caused it.
"""

import sys

import atheris

with atheris.instrument_imports():
    from nanograd_cli import parse
    from nanograd_cli.errors import NanogradError


def test_one_input(data: bytes) -> None:
    source = data.decode("utf-8", errors="replace")
    try:
        program = parse(source)
    except NanogradError:
        return
    program.gradients({name: 0.5 for name in program.inputs})


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
