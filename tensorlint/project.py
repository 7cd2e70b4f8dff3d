"""Where the project lives: the one URL that rule links, SARIF and the docs use.

pyproject.toml's `[project.urls]` names the same URL (tests/test_install_docs.py checks they agree).
"""

PROJECT_URL = "https://github.com/tensorlint/tensorlint"
