"""schedframe.objects.validation: upstream apimachinery's name and label rules and words."""

from __future__ import annotations

import pytest

from schedframe.errors import FieldIssue
from schedframe.objects import validation as v

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("web-1", []),
        ("a.b.c", []),
        ("Web", [_SUBDOMAIN_MSG]),
        ("web_1", [_SUBDOMAIN_MSG]),
        ("web-", [_SUBDOMAIN_MSG]),
        ("web\n", [_SUBDOMAIN_MSG]),  # Go's $ does not match before a final newline
        ("a" * 254, ["must be no more than 253 characters"]),
    ],
)
def test_dns1123_subdomain(value: str, expected: list[str]) -> None:
    assert v.is_dns1123_subdomain(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("kube-system", []),
        ("a.b", ["must not contain dots"]),
        ("A", [_LABEL_MSG]),
        ("a" * 64, ["must be no more than 63 characters"]),
    ],
)
def test_dns1123_label(value: str, expected: list[str]) -> None:
    assert v.is_dns1123_label(value) == expected


def test_dns1035_label() -> None:
    assert v.is_dns1035_label("svc-1") == []
    assert v.is_dns1035_label("1svc") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  "
        "or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("app", []),
        ("example.com/app", []),
        ("/app", ["prefix part must be non-empty"]),
        ("example.com/", ["name part must be non-empty", _NAME_PART_MSG]),
        ("Example.com/app", ["prefix part " + _SUBDOMAIN_MSG]),
        ("-app", [_NAME_PART_MSG]),
        ("a" * 64, ["name part must be no more than 63 characters"]),
        (
            "a/b/c",
            [
                "a qualified name "
                + _NAME_PART_MSG.removeprefix("name part ")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
    ],
)
def test_qualified_name(value: str, expected: list[str]) -> None:
    assert v.is_qualified_name(value) == expected


def test_label_value() -> None:
    assert v.is_valid_label_value("") == []
    assert v.is_valid_label_value("a_b.C-1") == []
    assert v.is_valid_label_value("-a") == [_VALUE_MSG]
    assert v.is_valid_label_value("a" * 64) == ["must be no more than 63 characters"]


def test_percent() -> None:
    assert v.is_valid_percent("25%") == []
    assert v.is_valid_percent("1.5%") == [
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. "
        "'1%',  or '93%', regex used for validation is '[0-9]+%')"
    ]


def test_service_names_are_dns1035_labels() -> None:
    assert v.name_is_dns1035_label("web") == []
    assert v.name_is_dns1035_label("web-", prefix=True) == []
    assert v.name_is_dns1035_label("1web") == v.is_dns1035_label("1web") != []


def test_generate_name_prefix_may_end_in_a_dash() -> None:
    assert v.name_is_dns_subdomain("web-", prefix=True) == []
    assert v.name_is_dns_subdomain("web-") == [_SUBDOMAIN_MSG]
    assert v.name_is_dns_label("ns-", prefix=True) == []


def test_label_issues_report_at_the_map_path() -> None:
    issues = v.label_issues({"-a": "ok", "b": "-x"}, "metadata.labels")
    assert [str(i) for i in issues] == [
        f'metadata.labels: Invalid value: "-a": {_NAME_PART_MSG}',
        f'metadata.labels: Invalid value: "-x": {_VALUE_MSG}',
    ]
    assert all(isinstance(i, FieldIssue) for i in issues)


def test_annotations_are_checked_in_lower_case_and_by_size() -> None:
    assert v.annotation_issues({"Example.com/Key": "x"}, "metadata.annotations") == []
    big = v.annotation_issues({"k": "x" * (256 * 1024)}, "metadata.annotations")
    assert [str(i) for i in big] == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]
