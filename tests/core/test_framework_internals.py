"""core.framework_internals was written against Django 5.2 and psycopg_pool 3.3: on any other
major.minor this fails, so that whoever upgrades reads each internal use again (and deletes the
ones the new version makes public) before the suite can pass."""

from __future__ import annotations

import django
import psycopg_pool

from core.framework_internals import WRITTEN_FOR


def _major_minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_the_adapter_names_the_django_it_was_written_against():
    assert django.VERSION[:2] == WRITTEN_FOR["django"] == (5, 2), (
        f"Django {django.get_version()}: review core/framework_internals.py for this version"
    )


def test_the_adapter_names_the_psycopg_pool_it_was_written_against():
    installed = _major_minor(psycopg_pool.__version__)
    assert installed == WRITTEN_FOR["psycopg_pool"] == (3, 3), (
        f"psycopg_pool {psycopg_pool.__version__}: review core/framework_internals.py for it"
    )
