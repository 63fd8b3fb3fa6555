"""identity.oauth_internals was written against django-oauth-toolkit 3.4 and oauthlib 3.3: on
any other major.minor this fails, so that whoever upgrades reads each private hook again (and
deletes those the new version makes public). Each DOT method identity.validators overrides must
still exist with the parameters it was written for, or our override would silently never run."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import AuthorizationCodeGrant

from identity.oauth_internals import VALIDATOR_HOOKS, WRITTEN_FOR, code_challenge_methods
from identity.validators import HeyAiraValidator


def _major_minor(distribution: str) -> tuple[int, int]:
    major, minor = version(distribution).split(".")[:2]
    return int(major), int(minor)


def test_the_adapter_names_the_django_oauth_toolkit_it_was_written_against():
    installed = _major_minor("django-oauth-toolkit")
    assert installed == WRITTEN_FOR["django-oauth-toolkit"] == (3, 4), (
        f"DOT {version('django-oauth-toolkit')}: review identity/oauth_internals.py"
    )


def test_the_adapter_names_the_oauthlib_it_was_written_against():
    installed = _major_minor("oauthlib")
    assert installed == WRITTEN_FOR["oauthlib"] == (3, 3), (
        f"oauthlib {version('oauthlib')}: review identity/oauth_internals.py"
    )


def test_each_overridden_hook_still_exists_on_dots_validator_with_its_parameters():
    for name, parameters in VALIDATOR_HOOKS.items():
        hook = getattr(OAuth2Validator, name, None)
        assert callable(hook), f"OAuth2Validator.{name} is gone: our override would never run"
        assert tuple(inspect.signature(hook).parameters) == parameters, name


def test_each_hook_is_overridden_by_our_validator():
    for name in VALIDATOR_HOOKS:
        assert getattr(HeyAiraValidator, name) is not getattr(OAuth2Validator, name), name


def test_our_validator_overrides_no_other_private_dot_method():
    """A private method of ours that DOT also defines (now, or after an upgrade) is an override
    no one declared: rename ours, or declare it in VALIDATOR_HOOKS."""
    ours = {
        name
        for klass in HeyAiraValidator.__mro__
        if klass.__module__.startswith("identity.")
        for name in vars(klass)
        if name.startswith("_") and not name.startswith("__")
    }
    assert {name for name in ours if hasattr(OAuth2Validator, name)} == set(VALIDATOR_HOOKS)


def test_oauthlib_still_reads_its_code_challenge_table():
    table = code_challenge_methods(AuthorizationCodeGrant)
    assert set(table) == {"plain", "S256"}
    source = inspect.getsource(AuthorizationCodeGrant.validate_code_challenge)
    assert "self._code_challenge_methods" in source
