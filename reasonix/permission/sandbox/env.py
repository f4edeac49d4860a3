"""Which environment variables never reach a sandboxed command (credentials)."""

from __future__ import annotations

__all__ = [
    "CREDENTIAL_NAMES",
    "CREDENTIAL_PARTS",
    "CREDENTIAL_PREFIXES",
    "CREDENTIAL_SUFFIXES",
    "is_credential_var",
    "scrub_env",
]

# Exact names: agent sockets and well-known tokens whose names fit no suffix rule.
CREDENTIAL_NAMES: frozenset[str] = frozenset(
    {
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DOCKER_AUTH_CONFIG",
        "KUBECONFIG",
        "NETRC",
        "PGPASSFILE",
        "VAULT_ADDR",
        # bare names the suffix rules below miss (they need a prefix before `_TOKEN` …)
        "TOKEN",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIALS",
        "MYSQL_PWD",
        "VAULT_TOKEN",
    }
)

# Prefixes (cloud SDKs keep many secrets per prefix) and name shapes that mean "secret".
# Plain string tests, not a regular expression: every bash call checks every variable,
# and compiling the equivalent pattern cost more than the checks themselves.
CREDENTIAL_PREFIXES: tuple[str, ...] = (
    "AWS_", "AZURE_", "GCP_", "GOOGLE_CLOUD_", "ALIBABA_CLOUD_", "OCI_", "DIGITALOCEAN_",
    "CLOUDFLARE_",
)  # fmt: skip
CREDENTIAL_SUFFIXES: tuple[str, ...] = (
    "_TOKEN", "_API_KEY", "_APIKEY", "_ACCESS_KEY", "_ACCESS_KEY_ID", "_PRIVATE_KEY",
    "_CREDENTIALS", "_PASSWORD", "_PASSWD", "_PASS", "_AUTH", "_COOKIE", "_SESSION_KEY",
    "_CLIENT_SECRET",
)  # fmt: skip
CREDENTIAL_PARTS: tuple[str, ...] = ("SECRET", "PASSWORD")  # anywhere in the name


def is_credential_var(name: str) -> bool:
    """True when ``name`` looks like it holds a credential (case-insensitive)."""
    upper = name.upper()
    return (
        upper in CREDENTIAL_NAMES
        or upper.startswith(CREDENTIAL_PREFIXES)
        or upper.endswith(CREDENTIAL_SUFFIXES)
        or any(part in upper for part in CREDENTIAL_PARTS)
    )


def scrub_env(env: dict[str, str]) -> dict[str, str]:
    """A copy of ``env`` without credential variables."""
    return {k: v for k, v in env.items() if not is_credential_var(k)}
