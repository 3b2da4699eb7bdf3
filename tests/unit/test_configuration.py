"""The settings, .env.example, docker-compose.yml and the deploy check agree."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def _env_names_read_by_settings() -> set[str]:
    tree = ast.parse((REPO / "nuggets_app" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("env_")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(node.args[0].value)
    return names


def _compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_compose_defines_the_whole_stack():
    services = _compose()["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "beat"}
    web = services["web"]["command"]
    assert "migrate" in web
    assert "gunicorn nuggets_app.wsgi" in web
    assert services["worker"]["command"][:4] == [
        "celery",
        "-A",
        "nuggets_app",
        "worker",
    ]
    assert services["beat"]["command"][:4] == ["celery", "-A", "nuggets_app", "beat"]


def test_compose_sets_only_variables_the_settings_read():
    from matcher import stems
    from nuggets_app.learning import embeddings

    # The matcher reads its stem table's location itself (it never imports settings),
    # and the Django-free embeddings their switch.
    read = _env_names_read_by_settings() | {stems.ENV, embeddings.SWITCH_ENV}
    for name in ("web", "worker", "beat"):
        env = _compose()["services"][name]["environment"]
        unknown = set(env) - read
        assert not unknown, f"{name} sets variables the settings ignore: {unknown}"
        assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"} <= set(env)


def test_every_setting_variable_is_documented_in_env_example():
    documented = set(
        re.findall(r"\b([A-Z][A-Z0-9_]+)=", (REPO / ".env.example").read_text())
    )
    missing = _env_names_read_by_settings() - documented
    assert not missing, f"undocumented variables: {missing}"


def test_production_settings_pass_the_deploy_check(tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="nuggets_app.settings",
        DEBUG="0",
        DATA_DIR=str(tmp_path),
        SECRET_KEY="x9" * 30 + "-production-only-key",
        ALLOWED_HOSTS="nuggets.example.org",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="1",
        SECURE_HSTS_PRELOAD="1",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def _settings_key(tmp_path, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="nuggets_app.settings")
    env.update(env_vars)
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_without_secret_key_production_settings_load_with_no_key(tmp_path):
    for env in ({}, {"DEBUG": "0", "SECRET_KEY": ""}):
        result = _settings_key(tmp_path, **env)
        assert result.returncode != 0
        # Nothing can sign with it, and no key is made up.
        assert "The SECRET_KEY setting must not be empty" in result.stderr
        assert not (tmp_path / "secret_key").exists()


def _clean_env(tmp_path, **env_vars: str) -> dict[str, str]:
    """A shell's environment with neither SECRET_KEY nor DEBUG (nor a database)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL"}
    }
    env.update(DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="nuggets_app.settings")
    env.update(env_vars)
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


WEB_SERVERS = {
    "wsgi": [sys.executable, "-c", "import nuggets_app.wsgi"],
    "asgi": [sys.executable, "-c", "import nuggets_app.asgi"],
    "runserver": [sys.executable, "manage.py", "runserver", "--noreload", "127.0.0.1:0"],
    "gunicorn": [
        str(Path(sys.executable).with_name("gunicorn")), "nuggets_app.wsgi",
        "--bind", "127.0.0.1:0", "--workers", "1",
    ],
}  # fmt: skip


@pytest.mark.parametrize("server", sorted(WEB_SERVERS))
@pytest.mark.parametrize("env_vars", [{}, {"DEBUG": "0", "SECRET_KEY": ""}])
def test_without_secret_key_the_web_server_refuses_to_start(tmp_path, server, env_vars):
    result = _run(WEB_SERVERS[server], _clean_env(tmp_path, **env_vars))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "ImproperlyConfigured: SECRET_KEY is not set" in output, output[-3000:]
    assert not (tmp_path / "secret_key").exists()


def test_in_development_a_random_key_is_generated_once(tmp_path):
    runs = [_settings_key(tmp_path, DEBUG="1") for _ in range(2)]
    keys = [run.stdout.strip() for run in runs]
    assert keys[0] == keys[1]
    assert len(keys[0]) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("value", "installed"), [(None, False), ("0", False), ("1", True)]
)
def test_the_benchmark_app_is_installed_only_when_asked(value, installed):
    env = {k: v for k, v in os.environ.items() if k != "BENCHMARKS"}
    if value is not None:
        env["BENCHMARKS"] = value
    code = (
        "from nuggets_app import settings; "
        "print('nuggets_app.benchmarks.apps.BenchmarksConfig' in settings.INSTALLED_APPS)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == str(installed)


@pytest.mark.parametrize("server", sorted(WEB_SERVERS))
def test_without_collectstatic_the_web_server_refuses_to_start_and_says_what_to_run(
    tmp_path, server
):
    env = _clean_env(tmp_path, DEBUG="0", SECRET_KEY="x9" * 30)
    result = _run(WEB_SERVERS[server], env)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "the static files are not collected" in output, output[-3000:]
    assert "manage.py collectstatic --noinput" in output
    assert str(tmp_path / "staticfiles" / "staticfiles.json") in output


def test_after_collectstatic_the_web_server_starts(tmp_path):
    env = _clean_env(tmp_path, DEBUG="0", SECRET_KEY="x9" * 30)
    collected = _run([sys.executable, "manage.py", "collectstatic", "--noinput"], env)
    assert collected.returncode == 0, collected.stderr[-3000:]
    started = _run(WEB_SERVERS["wsgi"], env)
    assert started.returncode == 0, started.stderr[-3000:]
