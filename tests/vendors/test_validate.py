"""Self-test of tests/vendors/validate.py: hand-made exchanges per kind of
description, some that must pass and some that must fail for a given
reason. Plain asserts:

    target/py/bin/python -m pytest tests/vendors/test_validate.py
    target/py/bin/python tests/vendors/test_validate.py

The registry-fetched descriptions (GitHub, Google, Notion) come from
tools/vendor-descriptions; their tests are skipped when target/vendors/
lacks them.
"""

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import validate  # noqa: E402

ROOT = HERE.parents[1]
JSON = [["content-type", "application/json"]]


class Skip(Exception):
    pass


def need(*paths):
    for p in paths:
        if not (ROOT / p).exists():
            try:
                import pytest

                pytest.skip(f"{p} is missing: run tools/vendor-descriptions")
            except ImportError:
                raise Skip(f"{p} is missing: run tools/vendor-descriptions")


def run(connector, *exchanges):
    """The problems validate.py finds in these exchanges, as lines."""
    report = validate.Report()
    validate.validate_data({"connector": connector, "exchanges": list(exchanges)}, report)
    return [p.line() for p in report.problems]


def x(method, url, headers=(), body=None, status=None, response=None, response_headers=JSON):
    out = {"method": method, "url": url, "headers": [list(h) for h in headers], "body": body}
    if status is not None:
        out["response"] = {
            "status": status,
            "headers": [list(h) for h in response_headers],
            "body": response if response is None or isinstance(response, str) else json.dumps(response),
        }
    return out


def only(problems, *needles):
    """Exactly one problem, which says all of needles."""
    assert len(problems) == 1, "\n".join(problems) or "no problem"
    for n in needles:
        assert n in problems[0], problems[0]


# -- OpenAPI 3.0 (GitHub, from the registry) ---------------------------------

GITHUB_HEADERS = [("accept", "application/vnd.github+json"), ("x-github-api-version", "2022-11-28"), ("authorization", "Bearer t")]
GITHUB_ITEM = {
    "url": "https://api.github.com/repos/acme/shop/issues/1", "repository_url": "https://api.github.com/repos/acme/shop",
    "labels_url": "l", "comments_url": "c", "events_url": "e", "html_url": "https://github.com/acme/shop/issues/1",
    "id": 1, "node_id": "n", "number": 1, "title": "Refund", "locked": False, "assignee": None,
    "user": None, "labels": [], "state": "open", "milestone": None, "comments": 0,
    "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-02T00:00:00Z", "closed_at": None,
    "author_association": "OWNER", "score": 1.0,
}


def test_github_search_passes():
    need("target/vendors/github/api.github.com.json")
    body = {"total_count": 1, "incomplete_results": False, "items": [GITHUB_ITEM], "search_type": "lexical"}
    assert run("github", x("GET", "https://api.github.com/search/issues?q=refund+org%3Aacme+is%3Aissue&per_page=30&advanced_search=true",
                           GITHUB_HEADERS, status=200, response=body)) == []


def test_github_per_page_above_the_prose_maximum():
    need("target/vendors/github/api.github.com.json")
    only(run("github", x("GET", "https://api.github.com/search/issues?q=x&per_page=101", GITHUB_HEADERS)),
         "'per_page' is 101, above the maximum 100", "max 100")


def test_github_undeclared_query_parameter():
    need("target/vendors/github/api.github.com.json")
    only(run("github", x("GET", "https://api.github.com/search/issues?q=x&sort_by=updated", GITHUB_HEADERS)),
         "query parameter 'sort_by' is not declared")


def test_github_response_missing_a_required_key():
    need("target/vendors/github/api.github.com.json")
    body = {"total_count": 1, "incomplete_results": False, "items": [GITHUB_ITEM]}
    only(run("github", x("GET", "https://api.github.com/search/issues?q=x", GITHUB_HEADERS, status=200, response=body)),
         "response 200 body /: 'search_type' is a required property")


def test_github_unpublished_api_version():
    need("target/vendors/github/api.github.com.json")
    headers = [("x-github-api-version", "2024-01-01"), ("authorization", "Bearer t")]
    only(run("github", x("GET", "https://api.github.com/search/issues?q=x", headers)), "X-GitHub-Api-Version", "'2024-01-01'")


def test_github_undeclared_status():
    need("target/vendors/github/api.github.com.json")
    only(run("github", x("GET", "https://api.github.com/search/issues?q=x", GITHUB_HEADERS, status=418, response={"message": "teapot"})),
         "response status 418 is not declared")


# -- Swagger 2.0 (Slack) -------------------------------------------------------

def test_slack_search_passes_with_the_bearer_header_for_token():
    problems = run("slack", x("GET", "https://slack.com/api/search.messages?query=refund&count=20&sort=score&highlight=false",
                              [("authorization", "Bearer xoxp")], status=200, response={"ok": True, "messages": {"matches": []}}))
    assert problems == [], problems


def test_slack_without_a_token_fails():
    problems = run("slack", x("GET", "https://slack.com/api/search.messages?query=refund"))
    assert len(problems) == 2, problems
    assert any("credential none sent" in p for p in problems), problems
    assert any("Missing required query parameter: token" in p for p in problems), problems


def test_slack_count_above_the_prose_maximum():
    only(run("slack", x("GET", "https://slack.com/api/search.messages?query=x&count=150", [("authorization", "Bearer xoxp")])),
         "'count' is 150, above the maximum 100")


def test_slack_revocation_as_post_passes():
    assert run("slack", x("POST", "https://slack.com/api/auth.revoke", [("authorization", "Bearer xoxp")],
                          status=200, response={"ok": True, "revoked": True})) == []


# -- Google discovery documents (from the registry) -------------------------------

def test_gmail_reads_pass():
    need("target/vendors/google/gmail.v1.json")
    h = [("authorization", "Bearer g")]
    problems = run(
        "gmail",
        x("GET", "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=refund&maxResults=12", h,
          status=200, response={"messages": [{"id": "m1", "threadId": "t1"}], "resultSizeEstimate": 1}),
        x("GET", "https://gmail.googleapis.com/gmail/v1/users/me/messages/m1?format=metadata&metadataHeaders=Subject&metadataHeaders=From", h,
          status=200, response={"id": "m1", "threadId": "t1", "snippet": "hi", "internalDate": "1700000000000"}),
    )
    assert problems == [], problems


def test_gmail_undeclared_parameter_and_enum():
    need("target/vendors/google/gmail.v1.json")
    problems = run("gmail", x("GET", "https://gmail.googleapis.com/gmail/v1/users/me/messages/m1?format=headers&limit=4",
                              [("authorization", "Bearer g")]))
    assert len(problems) == 2, problems
    assert any("'limit' is not declared" in p for p in problems), problems
    assert any("'format'" in p and "fails enum" in p for p in problems), problems


def test_drive_page_size_above_the_schema_maximum():
    need("target/vendors/google/drive.v3.json")
    only(run("google-drive", x("GET", "https://www.googleapis.com/drive/v3/files?q=x&pageSize=1001", [("authorization", "Bearer g")])),
         "'pageSize'", "fails maximum")


# -- OpenAPI 3.0, strict bodies (Intercom) ------------------------------------------

INTERCOM_HEADERS = [("content-type", "application/json"), ("intercom-version", "2.13"), ("authorization", "Bearer i")]
WORDS = {"operator": "OR", "value": [{"field": "source.body", "operator": "~", "value": "refund"}]}
SINCE = {"operator": "AND", "value": [{"field": "updated_at", "operator": ">", "value": 1700000000}]}


def test_intercom_search_passes():
    body = {"query": {"operator": "AND", "value": [WORDS, SINCE]}, "pagination": {"per_page": 150}}
    answer = {"type": "conversation.list", "conversations": [], "total_count": 0,
              "pages": {"type": "pages", "page": 1, "per_page": 150, "total_pages": 0}}
    assert run("intercom", x("POST", "https://api.intercom.io/conversations/search", INTERCOM_HEADERS, json.dumps(body),
                             status=200, response=answer)) == []


def test_intercom_body_key_not_in_the_schema():
    body = {"query": WORDS, "sort": {"field": "updated_at", "order": "descending"}}
    only(run("intercom", x("POST", "https://api.intercom.io/conversations/search", INTERCOM_HEADERS, json.dumps(body))),
         "request body key /sort is not declared")


def test_intercom_field_outside_the_searchable_table():
    body = {"query": {"field": "title", "operator": "~", "value": "refund"}}
    only(run("intercom", x("POST", "https://api.intercom.io/conversations/search", INTERCOM_HEADERS, json.dumps(body))),
         "'title'", "Accepted Fields")


# -- OpenAPI 3.0 with "X or null" in allOf (Box) --------------------------------------------

BOX_USER = {"type": "user", "id": "19450331001", "name": "Aisha Bello", "login": "aisha.bello@acme-shop.example"}
BOX_FOLDER = {"type": "folder", "id": "201", "sequence_id": "1", "etag": "1", "name": "Incidents"}


def box_file(**changes):
    item = {"type": "file", "id": "1208765432", "etag": "1", "sequence_id": "1", "name": "Postmortem.docx",
            "description": "", "size": 2048, "created_at": "2025-02-04T10:12:33-08:00",
            "modified_at": "2025-02-06T09:00:00-08:00", "trashed_at": None, "purged_at": None,
            "created_by": BOX_USER, "modified_by": BOX_USER, "owned_by": BOX_USER,
            "path_collection": {"total_count": 1, "entries": [BOX_FOLDER]},
            "shared_link": None, "parent": BOX_FOLDER, "item_status": "active"}
    item.update(changes)
    return item


def box_search(answer):
    return run("box", x("GET", "https://api.box.com/2.0/search?query=postmortem+OR+checkout&limit=10",
                        [("authorization", "Bearer b")], status=200, response=answer))


def test_box_search_passes_with_a_null_shared_link_and_parent():
    answer = {"type": "search_results_items", "total_count": 1, "limit": 10, "offset": 0,
              "entries": [box_file(), box_file(id="1208765433", parent=None)]}
    assert box_search(answer) == []


def test_box_shared_link_is_an_object_or_null_not_a_string():
    answer = {"type": "search_results_items", "entries": [box_file(shared_link="https://app.box.com/s/x")]}
    only(box_search(answer), "shared_link 'https://app.box.com/s/x' is not valid")


def test_box_offset_past_the_documented_cap():
    only(run("box", x("GET", "https://api.box.com/2.0/search?query=x&offset=10001", [("authorization", "Bearer b")])),
         "'offset'", "10000")


# -- Facts only (Zendesk, HubSpot) --------------------------------------------------------

def test_zendesk_search_passes():
    answer = {"results": [{"id": 1, "result_type": "ticket"}], "count": 1, "next_page": None, "previous_page": None, "facets": None}
    assert run("zendesk", x("GET", "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket+refund&per_page=25",
                            [("authorization", "Bearer z")], status=200, response=answer)) == []


def test_zendesk_per_page_above_the_documented_maximum():
    only(run("zendesk", x("GET", "https://acme.zendesk.com/api/v2/search.json?query=x&per_page=200", [("authorization", "Bearer z")])),
         "'per_page'", "fails maximum: 100", "developer.zendesk.com")


def test_hubspot_deals_search_passes_through_the_type_id_alias():
    body = {"query": "refund", "filterGroups": [], "properties": ["dealname"], "limit": 10, "sorts": [], "after": "0"}
    answer = {"total": 0, "results": []}
    assert run("hubspot", x("POST", "https://api.hubapi.com/crm/v3/objects/deals/search",
                            [("content-type", "application/json"), ("authorization", "Bearer h")], json.dumps(body),
                            status=200, response=answer)) == []


def test_hubspot_response_with_a_null_property():
    body = {"query": "r", "filterGroups": [], "properties": ["name"], "limit": 10, "sorts": [], "after": "0"}
    answer = {"total": 1, "results": [{"id": "1", "archived": False, "createdAt": "2024-01-01T00:00:00Z",
                                       "updatedAt": "2024-01-01T00:00:00Z", "properties": {"name": None}}]}
    only(run("hubspot", x("POST", "https://api.hubapi.com/crm/v3/objects/companies/search",
                          [("content-type", "application/json"), ("authorization", "Bearer h")], json.dumps(body),
                          status=200, response=answer)),
         "/results/*/properties/name: null fails type")


# -- GraphQL (Linear) --------------------------------------------------------------------

LINEAR_QUERY = """query Search($term: String!, $first: Int!, $after: String) {
  searchIssues(term: $term, first: $first, after: $after) {
    nodes { id identifier title description url createdAt updatedAt creator { name } state { name } }
    pageInfo { hasNextPage endCursor }
  }
}"""
LINEAR_HEADERS = [("content-type", "application/json"), ("authorization", "Bearer l")]
LINEAR_NODE = {"id": "i1", "identifier": "ENG-1", "title": "Refund", "description": None, "url": "https://linear.app/a/issue/ENG-1",
               "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-02T00:00:00.000Z", "creator": None, "state": {"name": "Todo"}}


def linear(query, variables, status=None, response=None):
    return x("POST", "https://api.linear.app/graphql", LINEAR_HEADERS, json.dumps({"query": query, "variables": variables}),
             status=status, response=response)


def test_linear_search_passes():
    data = {"data": {"searchIssues": {"nodes": [LINEAR_NODE], "pageInfo": {"hasNextPage": False, "endCursor": None}}}}
    assert run("linear", linear(LINEAR_QUERY, {"term": "refund", "first": 10, "after": None}, 200, data)) == []


def test_linear_field_that_does_not_exist():
    query = LINEAR_QUERY.replace("url createdAt", "url priorityLabel createdAt")
    only(run("linear", linear(query, {"term": "x", "first": 5})), "Cannot query field 'priorityLabel'")


def test_linear_wrong_variable_type():
    only(run("linear", linear(LINEAR_QUERY, {"term": "x", "first": "ten"})), "$first", "Int")


def test_linear_answer_with_a_null_where_the_schema_has_none():
    node = dict(LINEAR_NODE, state=None)
    data = {"data": {"searchIssues": {"nodes": [node], "pageInfo": {"hasNextPage": False, "endCursor": None}}}}
    problems = run("linear", linear(LINEAR_QUERY, {"term": "x", "first": 5}, 200, data))
    assert problems and all("Cannot return null for non-nullable field IssueSearchResult.state" in p for p in problems), problems


# -- Notion: OpenAPI 3.1 requests, TypeScript-typed answers --------------------------------

NOTION_HEADERS = [("content-type", "application/json"), ("notion-version", "2025-09-03"), ("authorization", "Bearer n")]


def test_notion_search_passes():
    need("target/vendors/notion/notion-openapi.json", "target/vendors/notion/typescript/lib/tsc.js")
    if shutil.which("node") is None:
        return
    body = {"query": "refund", "filter": {"property": "object", "value": "page"},
            "sort": {"timestamp": "last_edited_time", "direction": "descending"}, "page_size": 12}
    answer = {"object": "list", "next_cursor": None, "has_more": False, "type": "page_or_data_source",
              "page_or_data_source": {}, "results": [{"object": "page", "id": "p1"}]}
    assert run("notion", x("POST", "https://api.notion.com/v1/search", NOTION_HEADERS, json.dumps(body), status=200, response=answer)) == []


def test_notion_answer_not_of_the_sdk_type():
    need("target/vendors/notion/notion-openapi.json", "target/vendors/notion/typescript/lib/tsc.js")
    if shutil.which("node") is None:
        return
    answer = {"object": "list", "next_cursor": None, "has_more": "no", "type": "page_or_data_source",
              "page_or_data_source": {}, "results": []}
    only(run("notion", x("POST", "https://api.notion.com/v1/search", NOTION_HEADERS, json.dumps({"query": "x"}), status=200, response=answer)),
         "is not a SearchResponse")


def test_notion_page_size_above_the_prose_maximum_and_missing_version():
    need("target/vendors/notion/notion-openapi.json")
    headers = [("content-type", "application/json"), ("authorization", "Bearer n")]
    problems = run("notion", x("POST", "https://api.notion.com/v1/search", headers, json.dumps({"query": "x", "page_size": 101})))
    assert len(problems) == 2, problems
    assert any("/page_size is 101, above the maximum 100" in p for p in problems), problems
    assert any("Notion-Version is missing" in p for p in problems), problems


# -- Known errors in a description are skipped, exactly ------------------------------------

def test_trello_search_answer_is_an_object_despite_the_description():
    h = [("authorization", 'OAuth oauth_consumer_key="k", oauth_token="t"')]
    assert run("trello", x("GET", "https://api.trello.com/1/search?query=refund&modelTypes=cards&cards_limit=10", h,
                           status=200, response={"options": {}, "cards": []})) == []


def test_graph_open_types_take_strings_and_numbers():
    body = {"requests": [{"entityTypes": ["driveItem"], "query": {"queryString": "refund"}, "from": 0, "size": 25}]}
    hit = {"hitId": "h", "rank": 1, "summary": "s",
           "resource": {"@odata.type": "#microsoft.graph.driveItem", "id": "d", "name": "x.docx", "size": 21000}}
    answer = {"value": [{"hitsContainers": [{"total": 1, "moreResultsAvailable": False, "hits": [hit]}]}]}
    assert run("microsoft-files", x("POST", "https://graph.microsoft.com/v1.0/search/query",
                                  [("content-type", "application/json"), ("authorization", "Bearer m")], json.dumps(body),
                                  status=200, response=answer)) == []


# -- Atlassian: the API gateway's URLs map onto the site's ---------------------------------

def test_jira_gateway_request_and_answer():
    h = [("authorization", "Bearer a")]
    problems = run(
        "jira",
        x("GET", "https://api.atlassian.com/oauth/token/accessible-resources", h, status=200,
          response=[{"id": "c1", "url": "https://acme.atlassian.net", "name": "acme", "scopes": ["read:jira-work"]}]),
        x("GET", "https://api.atlassian.com/ex/jira/c1/rest/api/3/search/jql?jql=text+~+%22refund%22&fields=summary%2Cstatus&maxResults=10", h,
          status=200, response={"isLast": True, "issues": [], "total": 0}),
    )
    only(problems, "keys 'total' not allowed")


def test_asana_opt_fields_against_the_enum():
    only(run("asana", x("GET", "https://app.asana.com/api/1.0/workspaces/1/typeahead?resource_type=task&query=x&count=5&opt_fields=name,notes",
                        [("authorization", "Bearer a")])),
         "'opt_fields'", "notes fails enum")


# -- Scopes ------------------------------------------------------------------------------------

def with_manifest(connector, scopes, check):
    real = validate.manifest
    validate.manifest = lambda c: {**real(c), "oauth": {"scopes": [{"name": s, "read_only": True} for s in scopes]}}
    try:
        report = validate.Report()
        checker = validate.Checker(report)
        validate.check_scopes(report, checker, connector, checker.vendor_of(connector), None)
        check([p.line() for p in report.problems])
    finally:
        validate.manifest = real


def test_manifests_scopes_pass():
    for connector in ("jira", "confluence", "slack", "asana", "microsoft-files", "outlook-mail", "outlook-calendar", "microsoft-teams", "hubspot", "zendesk", "linear", "trello", "intercom", "salesforce", "google-calendar"):
        report = validate.Report()
        checker = validate.Checker(report)
        validate.check_scopes(report, checker, connector, checker.vendor_of(connector), None)
        assert report.problems == [], [p.line() for p in report.problems]


def test_scope_not_in_the_vendors_list():
    def check(problems):
        assert any("'read:jira-everything' is not a scope jira lists" in p for p in problems), problems

    with_manifest("jira", ["read:jira-work", "read:jira-everything"], check)


def test_write_scope_is_not_read_only():
    def check(problems):
        assert any("'write:jira-work' is not among jira's read-only scopes" in p for p in problems), problems
        assert not any("'write:jira-work' is not a scope" in p for p in problems), problems

    with_manifest("jira", ["read:jira-work", "write:jira-work"], check)


def test_operation_needs_a_scope_the_manifest_lacks():
    def check(problems):
        assert any("asks for none of the scopes the operation accepts (crm.objects.deals.read)" in p for p in problems), problems

    with_manifest("hubspot", ["crm.objects.contacts.read", "crm.objects.companies.read", "oauth"], check)


if __name__ == "__main__":
    failed = skipped = 0
    for name, test in sorted(globals().items()):
        if name.startswith("test_") and callable(test):
            try:
                test()
                print(f"ok   {name}")
            except Skip as e:
                skipped += 1
                print(f"skip {name}: {e}")
            except AssertionError as e:
                failed += 1
                print(f"FAIL {name}: {e}")
    print(f"{failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
