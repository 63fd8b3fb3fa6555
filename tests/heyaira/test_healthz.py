from django.test import Client


def test_it_answers_ok_without_auth_or_database(db, client: Client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["X-Request-ID"]


def test_it_echoes_a_sane_request_id(client: Client):
    response = client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert response["X-Request-ID"] == "abc-123"


def test_it_replaces_an_unsafe_request_id(client: Client):
    response = client.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
    assert response["X-Request-ID"] != "bad id\twith spaces"
    assert len(response["X-Request-ID"]) == 32
