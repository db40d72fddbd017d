#!/usr/bin/env python3
"""Writes the JSON Schema corpus, tests/data/json_schema/NNN_name.json: realistic tool-call
and API shapes, nested objects, arrays, enums, formats, refs, ranges and patterns, each with
instances that validate and instances that do not. json_schema_check.py confirms every label
with Python's jsonschema; json_schema_corpus_test checks poot's grammars against them.

Valid instances list members in the schema's order and use compact values (poot's grammars
accept object members in the schema's order only; docs/json_schema.md).

Usage: json_schema_corpus.py [OUT_DIR]   (default: tests/data/json_schema)"""
import json
import os
import sys

S = "string"
I = "integer"
N = "number"
B = "boolean"
O = "object"
A = "array"

CORPUS = []


def case(name, schema, valid, invalid, strict=False, walk=True, walks=None):
    """walk False: random byte walks almost never finish (an unanchored pattern must spell its
    literal before the string may close), so json_schema_check.py does not ask for them.
    walks: fewer walks than the default where each is long (a 1,500-character string) or the
    recursion is critical (each node has one child on average, so sizes are heavy-tailed)."""
    CORPUS.append((name, schema, valid, invalid, strict, walk, walks))


def obj(props, required=None, additional=None, **kw):
    s = {"type": O, "properties": props}
    if required is not None:
        s["required"] = required
    if additional is not None:
        s["additionalProperties"] = additional
    s.update(kw)
    return s


# ------------------------------------------------------------ tool calls

case("get_weather", obj({"location": {"type": S, "description": "City and country"},
                         "unit": {"type": S, "enum": ["celsius", "fahrenheit"]}},
                        ["location"], False),
     [{"location": "Paris, France"}, {"location": "Oslo", "unit": "celsius"}],
     [{}, {"location": "Rome", "unit": "kelvin"}, {"location": 3}, {"location": "x", "extra": 1}])
case("web_search", obj({"query": {"type": S, "minLength": 1},
                        "max_results": {"type": I, "minimum": 1, "maximum": 50},
                        "safe": {"type": B}}, ["query"], False),
     [{"query": "rust borrow checker"}, {"query": "a", "max_results": 50, "safe": True}],
     [{"query": ""}, {"query": "x", "max_results": 0}, {"query": "x", "max_results": 51},
      {"query": "x", "safe": "yes"}])
case("send_email", obj({"to": {"type": A, "items": {"type": S, "format": "email"}, "minItems": 1},
                        "cc": {"type": A, "items": {"type": S, "format": "email"}},
                        "subject": {"type": S, "maxLength": 120},
                        "body": {"type": S}}, ["to", "subject", "body"], False),
     [{"to": ["alice@example.com"], "subject": "Hi", "body": "Hello!"},
      {"to": ["a.b@mail.example.org", "c@d.io"], "cc": [], "subject": "", "body": "x\ny"}],
     [{"to": [], "subject": "s", "body": "b"}, {"to": ["nobody"], "subject": "s", "body": "b"},
      {"to": ["a@b.co"], "body": "b"}, {"to": ["a@b.co"], "subject": "s" * 121, "body": "b"}])
case("create_calendar_event", obj({
    "title": {"type": S, "minLength": 1, "maxLength": 80},
    "start": {"type": S, "format": "date-time"},
    "end": {"type": S, "format": "date-time"},
    "attendees": {"type": A, "items": {"type": S, "format": "email"}, "maxItems": 10},
    "reminder_minutes": {"type": I, "enum": [0, 5, 10, 30, 60]}},
    ["title", "start", "end"], False),
    [{"title": "Standup", "start": "2025-01-06T09:00:00Z", "end": "2025-01-06T09:15:00Z"},
     {"title": "Review", "start": "2025-02-28T14:00:00+01:00", "end": "2025-02-28T15:00:00.5+01:00",
      "attendees": ["bob@corp.com"], "reminder_minutes": 10}],
    [{"title": "x", "start": "2025-01-06 09:00", "end": "2025-01-06T09:15:00Z"},
     {"title": "x", "start": "2025-01-06T09:00:00Z", "end": "2025-01-06T25:00:00Z"},
     {"title": "x", "start": "2025-01-06T09:00:00Z", "end": "2025-01-06T09:15:00Z",
      "reminder_minutes": 15},
     {"title": "", "start": "2025-01-06T09:00:00Z", "end": "2025-01-06T09:15:00Z"}])
case("book_flight", obj({
    "origin": {"type": S, "pattern": "^[A-Z]{3}$"},
    "destination": {"type": S, "pattern": "^[A-Z]{3}$"},
    "date": {"type": S, "format": "date"},
    "passengers": {"type": I, "minimum": 1, "maximum": 9},
    "cabin": {"enum": ["economy", "premium", "business", "first"]}},
    ["origin", "destination", "date"], False),
    [{"origin": "CDG", "destination": "JFK", "date": "2025-07-14"},
     {"origin": "LHR", "destination": "NRT", "date": "2024-02-29", "passengers": 2, "cabin": "first"}],
    [{"origin": "cdg", "destination": "JFK", "date": "2025-07-14"},
     {"origin": "CDG", "destination": "JFK", "date": "2025-02-29"},
     {"origin": "CDG", "destination": "JFK", "date": "2025-07-14", "passengers": 10},
     {"origin": "CDG", "destination": "JFKX", "date": "2025-07-14"}])
case("run_sql", obj({"query": {"type": S}, "params": {"type": A, "items": {"type": [S, N, B, "null"]}},
                     "timeout_ms": {"type": I, "minimum": 100, "maximum": 60000}},
                    ["query"], False),
     [{"query": "SELECT 1"}, {"query": "SELECT * FROM t WHERE a = ?", "params": [1, "x", None, True, 2.5],
                               "timeout_ms": 60000}],
     [{"query": "q", "params": [[1]]}, {"query": "q", "timeout_ms": 99}, {"query": "q", "params": [{}]}])
case("translate", obj({"text": {"type": S}, "source": {"type": S, "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
                       "target": {"type": S, "pattern": "^[a-z]{2}(-[A-Z]{2})?$"}},
                      ["text", "target"], False),
     [{"text": "Bonjour", "target": "en"}, {"text": "hi", "source": "en-US", "target": "pt-BR"}],
     [{"text": "x", "target": "english"}, {"text": "x", "target": "en-us"}, {"target": "de"}])
case("set_thermostat", obj({"room": {"type": S, "enum": ["living", "bedroom", "kitchen"]},
                            "celsius": {"type": N, "minimum": 5, "maximum": 30},
                            "mode": {"type": S, "enum": ["heat", "cool", "auto", "off"]}},
                           ["room", "celsius"], False),
     [{"room": "living", "celsius": 21.5}, {"room": "kitchen", "celsius": 30, "mode": "off"},
      {"room": "bedroom", "celsius": 5.0}],
     [{"room": "garage", "celsius": 20}, {"room": "living", "celsius": 30.01},
      {"room": "living", "celsius": 4.999}, {"room": "living", "celsius": "20"}])
case("create_github_issue", obj({
    "owner": {"type": S, "pattern": "^[A-Za-z0-9-]+$"}, "repo": {"type": S, "pattern": "^[A-Za-z0-9._-]+$"},
    "title": {"type": S, "minLength": 1}, "body": {"type": S},
    "labels": {"type": A, "items": {"type": S}, "maxItems": 5},
    "assignee": {"type": [S, "null"]}}, ["owner", "repo", "title"], False),
    [{"owner": "octo", "repo": "hello.world", "title": "Bug: crash"},
     {"owner": "a-b", "repo": "r_1", "title": "T", "body": "steps", "labels": ["bug", "p1"], "assignee": None}],
    [{"owner": "a b", "repo": "r", "title": "t"}, {"owner": "a", "repo": "r", "title": ""},
     {"owner": "a", "repo": "r", "title": "t", "labels": ["1", "2", "3", "4", "5", "6"]},
     {"owner": "a", "repo": "r", "title": "t", "assignee": 7}])
case("resize_image", obj({"url": {"type": S, "pattern": "^https?://"},
                          "width": {"type": I, "exclusiveMinimum": 0, "maximum": 8192},
                          "height": {"type": I, "exclusiveMinimum": 0, "maximum": 8192},
                          "format": {"enum": ["png", "jpeg", "webp"]}},
                         ["url", "width", "height"], False),
     [{"url": "https://x.io/a.png", "width": 1, "height": 8192},
      {"url": "http://h/p", "width": 640, "height": 480, "format": "webp"}],
     [{"url": "ftp://x", "width": 1, "height": 1}, {"url": "https://x", "width": 0, "height": 1},
      {"url": "https://x", "width": 8193, "height": 1}, {"url": "https://x", "width": -5, "height": 1}])
case("transfer_money", obj({"from_account": {"type": S, "pattern": "^[0-9]{8,12}$"},
                            "to_account": {"type": S, "pattern": "^[0-9]{8,12}$"},
                            "amount": {"type": N, "exclusiveMinimum": 0, "maximum": 10000},
                            "currency": {"const": "EUR"}, "memo": {"type": S, "maxLength": 35}},
                           ["from_account", "to_account", "amount", "currency"], False),
     [{"from_account": "12345678", "to_account": "987654321012", "amount": 0.01, "currency": "EUR"},
      {"from_account": "11112222", "to_account": "33334444", "amount": 10000, "currency": "EUR", "memo": "rent"}],
     [{"from_account": "1234567", "to_account": "33334444", "amount": 5, "currency": "EUR"},
      {"from_account": "11112222", "to_account": "33334444", "amount": 0, "currency": "EUR"},
      {"from_account": "11112222", "to_account": "33334444", "amount": 5, "currency": "USD"},
      {"from_account": "11112222", "to_account": "33334444", "amount": 10000.5, "currency": "EUR"}])
case("schedule_reminder", obj({"text": {"type": S}, "at": {"type": S, "format": "time"},
                               "days": {"type": A, "items": {"enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]},
                                        "minItems": 1, "maxItems": 7}}, ["text", "at"], False),
     [{"text": "meds", "at": "08:00:00Z"}, {"text": "gym", "at": "18:30:00+02:00", "days": ["mon", "thu"]}],
     [{"text": "x", "at": "8:00"}, {"text": "x", "at": "08:00:00Z", "days": []},
      {"text": "x", "at": "08:00:00Z", "days": ["monday"]}, {"text": "x", "at": "08:61:00Z"}])
case("lookup_order", obj({"order_id": {"type": S, "format": "uuid"}, "include_items": {"type": B}},
                         ["order_id"], False),
     [{"order_id": "123e4567-e89b-12d3-a456-426614174000"},
      {"order_id": "00000000-0000-0000-0000-000000000000", "include_items": False}],
     [{"order_id": "123e4567e89b12d3a456426614174000"}, {"order_id": "xyz"}, {"include_items": True}])
case("geocode", obj({"address": {"type": S}, "lat": {"type": N, "minimum": -90, "maximum": 90},
                     "lon": {"type": N, "minimum": -180, "maximum": 180}}, ["address"], False),
     [{"address": "1 Main St"}, {"address": "x", "lat": -90, "lon": 179.9999},
      {"address": "y", "lat": 45.5, "lon": -73.57}],
     [{"address": "x", "lat": 90.1}, {"address": "x", "lon": -180.5}, {"address": "x", "lat": "45"}])
case("code_interpreter", obj({"language": {"enum": ["python", "javascript", "bash"]},
                              "code": {"type": S, "minLength": 1}}, ["language", "code"], False),
     [{"language": "python", "code": "print(1)"}, {"language": "bash", "code": "ls -la\necho \"done\""}],
     [{"language": "ruby", "code": "p 1"}, {"language": "python", "code": ""}, {"code": "x"}])
case("tool_choice_union", {"anyOf": [
    obj({"name": {"const": "get_time"}, "arguments": obj({"tz": {"type": S}}, ["tz"], False)},
        ["name", "arguments"], False),
    obj({"name": {"const": "add"}, "arguments": obj({"a": {"type": N}, "b": {"type": N}}, ["a", "b"], False)},
        ["name", "arguments"], False)]},
    [{"name": "get_time", "arguments": {"tz": "UTC"}}, {"name": "add", "arguments": {"a": 1, "b": -2.5}}],
    [{"name": "add", "arguments": {"tz": "UTC"}}, {"name": "get_time", "arguments": {"a": 1, "b": 2}},
     {"name": "sub", "arguments": {}}])
case("parallel_tool_calls", {"type": A, "minItems": 1, "maxItems": 4, "items": obj({
    "id": {"type": S, "pattern": "^call_[A-Za-z0-9]{4,24}$"},
    "type": {"const": "function"},
    "function": obj({"name": {"type": S, "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$"}, "arguments": {"type": S}},
                    ["name", "arguments"], False)}, ["id", "type", "function"], False)},
    [[{"id": "call_abcd", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
     [{"id": "call_X1Y2Z3", "type": "function", "function": {"name": "get_weather", "arguments": "{\"a\":1}"}},
      {"id": "call_0000", "type": "function", "function": {"name": "_g", "arguments": ""}}]],
    [[], [{"id": "call_ab", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
     [{"id": "call_abcd", "type": "tool", "function": {"name": "f", "arguments": "{}"}}],
     [{"id": "call_abcd", "type": "function", "function": {"name": "1f", "arguments": "{}"}}]])
case("extract_contacts", obj({"contacts": {"type": A, "items": obj({
    "name": {"type": S}, "email": {"type": S, "format": "email"},
    "phone": {"type": S, "pattern": "^\\+?[1-9]\\d{1,14}$"}}, ["name"], False)}}, ["contacts"], False),
    [{"contacts": []}, {"contacts": [{"name": "Ann", "email": "ann@x.org"}, {"name": "Bo", "phone": "+4712345678"}]}],
    [{"contacts": [{"email": "a@b.c"}]}, {"contacts": [{"name": "A", "phone": "0123"}]},
     {"contacts": [{"name": "A", "email": "ann"}]}])
case("classify_ticket", obj({"category": {"enum": ["billing", "technical", "account", "other"]},
                             "priority": {"type": I, "minimum": 1, "maximum": 5},
                             "confidence": {"type": N, "minimum": 0, "maximum": 1},
                             "tags": {"type": A, "items": {"type": S, "pattern": "^[a-z-]+$"}}},
                            ["category", "priority", "confidence"], False),
     [{"category": "billing", "priority": 3, "confidence": 0.87},
      {"category": "other", "priority": 1, "confidence": 1, "tags": ["refund", "vip-user"]}],
     [{"category": "sales", "priority": 3, "confidence": 0.5}, {"category": "other", "priority": 6, "confidence": 0.5},
      {"category": "other", "priority": 2, "confidence": 1.01}, {"category": "other", "priority": 2, "confidence": 0.2, "tags": ["A"]}])
case("summarize", obj({"summary": {"type": S, "maxLength": 280}, "bullet_points": {"type": A, "items": {"type": S},
                       "minItems": 3, "maxItems": 5}, "sentiment": {"enum": ["positive", "neutral", "negative"]}},
                      ["summary", "bullet_points", "sentiment"], False),
     [{"summary": "ok", "bullet_points": ["a", "b", "c"], "sentiment": "neutral"},
      {"summary": "", "bullet_points": ["1", "2", "3", "4", "5"], "sentiment": "negative"}],
     [{"summary": "s", "bullet_points": ["a", "b"], "sentiment": "neutral"},
      {"summary": "s", "bullet_points": ["a", "b", "c", "d", "e", "f"], "sentiment": "neutral"},
      {"summary": "s", "bullet_points": ["a", "b", "c"], "sentiment": "mixed"}])
case("kubectl_scale", obj({"namespace": {"type": S, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                           "deployment": {"type": S, "minLength": 1, "maxLength": 63},
                           "replicas": {"type": I, "minimum": 0, "maximum": 1000}},
                          ["namespace", "deployment", "replicas"], False),
     [{"namespace": "default", "deployment": "web", "replicas": 0},
      {"namespace": "kube-system", "deployment": "dns", "replicas": 1000}],
     [{"namespace": "-bad", "deployment": "web", "replicas": 1}, {"namespace": "ok", "deployment": "", "replicas": 1},
      {"namespace": "ok", "deployment": "w", "replicas": 1001}, {"namespace": "ok", "deployment": "w", "replicas": -1}])
case("http_request", obj({"method": {"type": S, "pattern": "^(GET|POST|PUT|PATCH|DELETE)$"},
                          "url": {"type": S}, "headers": {"type": O, "additionalProperties": {"type": S}},
                          "body": {"type": [S, "null"]}}, ["method", "url"], False),
     [{"method": "GET", "url": "/"}, {"method": "POST", "url": "/x", "headers": {"Content-Type": "json", "X-A": ""}, "body": "{}"}],
     [{"method": "get", "url": "/"}, {"method": "GET", "url": "/", "headers": {"a": 1}},
      {"method": "HEAD", "url": "/"}, {"method": "GET", "url": "/", "body": 5}])
case("rate_limit_config", obj({"requests_per_minute": {"type": I, "minimum": 1, "maximum": 100000},
                               "burst": {"type": I, "minimum": 0}, "per": {"enum": ["ip", "user", "key"]}},
                              ["requests_per_minute", "per"], False),
     [{"requests_per_minute": 100000, "per": "ip"}, {"requests_per_minute": 1, "burst": 123456789012, "per": "key"}],
     [{"requests_per_minute": 0, "per": "ip"}, {"requests_per_minute": 100001, "per": "ip"},
      {"requests_per_minute": 5, "burst": -1, "per": "ip"}])
case("move_file", obj({"src": {"type": S, "pattern": "^/"}, "dst": {"type": S, "pattern": "^/"},
                       "overwrite": {"type": B, "default": False}}, ["src", "dst"], False),
     [{"src": "/a", "dst": "/b/c"}, {"src": "/x y", "dst": "/z", "overwrite": True}],
     [{"src": "a", "dst": "/b"}, {"src": "/a", "dst": "b"}, {"src": "/a"}])

# --------------------------------------------------------- API responses

ADDRESS = obj({"street": {"type": S}, "city": {"type": S}, "zip": {"type": S, "pattern": "^\\d{5}(-\\d{4})?$"},
               "country": {"type": S, "pattern": "^[A-Z]{2}$"}}, ["street", "city", "country"], False)
case("user_profile", obj({"id": {"type": I, "minimum": 1}, "username": {"type": S, "pattern": "^[a-z0-9_]{3,16}$"},
                          "email": {"type": S, "format": "email"}, "created_at": {"type": S, "format": "date-time"},
                          "address": ADDRESS, "roles": {"type": A, "items": {"enum": ["admin", "editor", "viewer"]}}},
                         ["id", "username", "email"], False),
     [{"id": 1, "username": "ann_1", "email": "ann@example.com"},
      {"id": 42, "username": "bob", "email": "b@x.io", "created_at": "2020-01-01T00:00:00Z",
       "address": {"street": "1 Rue", "city": "Lyon", "zip": "69001", "country": "FR"}, "roles": ["admin", "viewer"]}],
     [{"id": 0, "username": "ann", "email": "a@b.co"}, {"id": 1, "username": "An", "email": "a@b.co"},
      {"id": 1, "username": "ann", "email": "a@b.co", "address": {"street": "s", "city": "c", "country": "fra"}},
      {"id": 1, "username": "ann", "email": "a@b.co", "roles": ["owner"]}])
case("order", obj({"order_id": {"type": S, "format": "uuid"}, "status": {"enum": ["pending", "paid", "shipped", "cancelled"]},
                   "items": {"type": A, "minItems": 1, "items": obj({"sku": {"type": S, "pattern": "^[A-Z0-9-]{4,20}$"},
                                                                      "qty": {"type": I, "minimum": 1},
                                                                      "unit_price": {"type": N, "minimum": 0}},
                                                                     ["sku", "qty", "unit_price"], False)},
                   "total": {"type": N, "minimum": 0}}, ["order_id", "status", "items", "total"], False),
     [{"order_id": "5f1d7a0e-3c4b-4a5e-9f00-1234567890ab", "status": "paid",
       "items": [{"sku": "AB-12", "qty": 2, "unit_price": 9.99}], "total": 19.98}],
     [{"order_id": "5f1d7a0e-3c4b-4a5e-9f00-1234567890ab", "status": "paid", "items": [], "total": 0},
      {"order_id": "5f1d7a0e-3c4b-4a5e-9f00-1234567890ab", "status": "lost", "items": [{"sku": "ABCD", "qty": 1, "unit_price": 1}], "total": 1},
      {"order_id": "5f1d7a0e-3c4b-4a5e-9f00-1234567890ab", "status": "paid", "items": [{"sku": "ABCD", "qty": 0, "unit_price": 1}], "total": 1},
      {"order_id": "5f1d7a0e-3c4b-4a5e-9f00-1234567890ab", "status": "paid", "items": [{"sku": "ABCD", "qty": 1, "unit_price": -1}], "total": 1}])
case("paginated_list", obj({"data": {"type": A, "items": obj({"id": {"type": S}, "name": {"type": S}}, ["id", "name"])},
                            "has_more": {"type": B}, "next_cursor": {"type": [S, "null"]}},
                           ["data", "has_more", "next_cursor"], False),
     [{"data": [], "has_more": False, "next_cursor": None},
      {"data": [{"id": "1", "name": "a"}, {"id": "2", "name": "b", "extra": [1, {"k": None}]}], "has_more": True, "next_cursor": "abc"}],
     [{"data": [], "has_more": False}, {"data": [{"id": "1"}], "has_more": False, "next_cursor": None},
      {"data": {}, "has_more": False, "next_cursor": None}])
case("error_response", obj({"error": obj({"code": {"type": I, "minimum": 400, "maximum": 599},
                                          "message": {"type": S}, "details": {"type": A, "items": {"type": S}}},
                                         ["code", "message"], False)}, ["error"], False),
     [{"error": {"code": 404, "message": "not found"}}, {"error": {"code": 599, "message": "", "details": ["a"]}}],
     [{"error": {"code": 200, "message": "ok"}}, {"error": {"code": 600, "message": "x"}}, {"error": {"message": "x"}}])
case("product", obj({"id": {"type": S}, "name": {"type": S, "minLength": 1, "maxLength": 200},
                     "price": obj({"amount": {"type": N, "minimum": 0}, "currency": {"enum": ["USD", "EUR", "GBP", "JPY"]}},
                                  ["amount", "currency"], False),
                     "in_stock": {"type": B}, "dimensions_cm": {"type": A, "prefixItems": [{"type": N}, {"type": N}, {"type": N}],
                                                                "items": False}},
                    ["id", "name", "price"], False),
     [{"id": "p1", "name": "Lamp", "price": {"amount": 19.5, "currency": "EUR"}},
      {"id": "p2", "name": "Desk", "price": {"amount": 0, "currency": "JPY"}, "in_stock": True, "dimensions_cm": [120, 60, 75.5]},
      {"id": "p3", "name": "Box", "price": {"amount": 1, "currency": "USD"}, "dimensions_cm": [1]}],
     [{"id": "p", "name": "", "price": {"amount": 1, "currency": "EUR"}},
      {"id": "p", "name": "n", "price": {"amount": 1, "currency": "CHF"}},
      {"id": "p", "name": "n", "price": {"amount": 1, "currency": "EUR"}, "dimensions_cm": [1, 2, 3, 4]}])
case("invoice", obj({"number": {"type": S, "pattern": "^INV-\\d{6}$"}, "issued": {"type": S, "format": "date"},
                     "due": {"type": S, "format": "date"},
                     "lines": {"type": A, "items": obj({"description": {"type": S}, "amount": {"type": N}}, ["description", "amount"], False)},
                     "paid": {"type": B}}, ["number", "issued", "lines"], False),
     [{"number": "INV-000001", "issued": "2025-01-31", "lines": []},
      {"number": "INV-123456", "issued": "2000-02-29", "due": "2000-03-31", "lines": [{"description": "work", "amount": -5.25}], "paid": False}],
     [{"number": "INV-1", "issued": "2025-01-31", "lines": []}, {"number": "INV-000001", "issued": "2025-04-31", "lines": []},
      {"number": "INV-000001", "issued": "1900-02-29", "lines": []}])
case("weather_report", obj({"location": {"type": S}, "temperature_c": {"type": N, "minimum": -90, "maximum": 60},
                            "humidity": {"type": I, "minimum": 0, "maximum": 100},
                            "conditions": {"enum": ["sunny", "cloudy", "rain", "snow", "fog"]},
                            "forecast": {"type": A, "maxItems": 7, "items": obj({"day": {"type": S, "format": "date"},
                                                                                 "high": {"type": N}, "low": {"type": N}},
                                                                                ["day", "high", "low"], False)}},
                           ["location", "temperature_c", "conditions"], False),
     [{"location": "Oslo", "temperature_c": -12.5, "conditions": "snow"},
      {"location": "Lima", "temperature_c": 18, "humidity": 100, "conditions": "fog",
       "forecast": [{"day": "2025-06-01", "high": 20, "low": 14.2}]}],
     [{"location": "x", "temperature_c": 61, "conditions": "sunny"}, {"location": "x", "temperature_c": 1, "humidity": 101, "conditions": "sunny"},
      {"location": "x", "temperature_c": 1, "conditions": "hail"}])
case("chat_message", obj({"role": {"enum": ["system", "user", "assistant", "tool"]}, "content": {"type": [S, "null"]},
                          "name": {"type": S, "pattern": "^[a-zA-Z0-9_-]{1,64}$"}}, ["role", "content"], False),
     [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "name": "bot_1"}],
     [{"role": "bot", "content": "x"}, {"role": "user"}, {"role": "user", "content": "x", "name": "a b"}])
case("log_entry", obj({"ts": {"type": S, "format": "date-time"}, "level": {"enum": ["debug", "info", "warn", "error"]},
                       "msg": {"type": S}, "host": {"type": S, "format": "ipv4"}, "fields": {"type": O}},
                      ["ts", "level", "msg"], False),
     [{"ts": "2025-03-10T08:00:00.000Z", "level": "info", "msg": "started"},
      {"ts": "2025-03-10T08:00:00z", "level": "error", "msg": "x", "host": "10.0.0.255", "fields": {"a": [1, 2]}}],
     [{"ts": "yesterday", "level": "info", "msg": "x"}, {"ts": "2025-03-10T08:00:00Z", "level": "fatal", "msg": "x"},
      {"ts": "2025-03-10T08:00:00Z", "level": "info", "msg": "x", "host": "300.1.1.1"}])
case("bank_transaction", obj({"id": {"type": S, "format": "uuid"}, "amount": {"type": N, "minimum": -1000000, "maximum": 1000000},
                              "booked": {"type": S, "format": "date"}, "counterparty": {"type": S},
                              "category": {"type": [S, "null"], "enum": ["food", "rent", "salary", None]}},
                             ["id", "amount", "booked"], False),
     [{"id": "a0b1c2d3-e4f5-6789-abcd-ef0123456789", "amount": -42.1, "booked": "2024-12-31"},
      {"id": "A0B1C2D3-E4F5-6789-ABCD-EF0123456789", "amount": 1000000, "booked": "2024-01-01", "category": None}],
     [{"id": "a0b1c2d3-e4f5-6789-abcd-ef0123456789", "amount": 1000000.01, "booked": "2024-12-31"},
      {"id": "a0b1c2d3-e4f5-6789-abcd-ef0123456789", "amount": 1, "booked": "2024-12-32"},
      {"id": "a0b1c2d3-e4f5-6789-abcd-ef0123456789", "amount": 1, "booked": "2024-12-31", "category": "travel"}])
case("sensor_reading", obj({"sensor": {"type": S, "pattern": "^S[0-9]{3}$"}, "value": {"type": N, "exclusiveMinimum": -273.15},
                            "unit": {"const": "C"}, "ok": {"type": B}}, ["sensor", "value", "unit"], False),
     [{"sensor": "S001", "value": -273.14, "unit": "C"}, {"sensor": "S999", "value": 1e3, "unit": "C", "ok": True}],
     [{"sensor": "S01", "value": 1, "unit": "C"}, {"sensor": "S001", "value": -273.15, "unit": "C"},
      {"sensor": "S001", "value": -300, "unit": "C"}, {"sensor": "S001", "value": 1, "unit": "F"}])
case("movie", obj({"title": {"type": S}, "year": {"type": I, "minimum": 1888, "maximum": 2100},
                   "genres": {"type": A, "items": {"type": S}, "minItems": 1}, "rating": {"type": N, "minimum": 0, "maximum": 10},
                   "director": obj({"name": {"type": S}, "born": {"type": I}}, ["name"])}, ["title", "year"], False),
     [{"title": "Alien", "year": 1979}, {"title": "Up", "year": 2009, "genres": ["animation"], "rating": 8.3,
                                         "director": {"name": "Pete Docter", "born": 1968, "oscars": 2}}],
     [{"title": "x", "year": 1887}, {"title": "x", "year": 2000, "genres": []}, {"title": "x", "year": 2000, "rating": 10.5},
      {"title": "x", "year": 2000, "director": {"born": 1}}])
case("recipe", obj({"name": {"type": S}, "servings": {"type": I, "minimum": 1, "maximum": 100},
                    "ingredients": {"type": A, "minItems": 1, "items": obj({"item": {"type": S}, "quantity": {"type": N, "exclusiveMinimum": 0},
                                                                            "unit": {"enum": ["g", "kg", "ml", "l", "tsp", "tbsp", "cup", "piece"]}},
                                                                           ["item", "quantity"], False)},
                    "steps": {"type": A, "items": {"type": S, "minLength": 3}}}, ["name", "ingredients", "steps"], False),
     [{"name": "Tea", "ingredients": [{"item": "water", "quantity": 250, "unit": "ml"}], "steps": ["boil", "steep"]}],
     [{"name": "x", "ingredients": [], "steps": []}, {"name": "x", "ingredients": [{"item": "a", "quantity": 0}], "steps": []},
      {"name": "x", "ingredients": [{"item": "a", "quantity": 1, "unit": "oz"}], "steps": []},
      {"name": "x", "ingredients": [{"item": "a", "quantity": 1}], "steps": ["go"]}])
case("package_json", obj({"name": {"type": S, "pattern": "^(@[a-z0-9-]+/)?[a-z0-9._-]+$"},
                          "version": {"type": S, "pattern": "^\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?$"},
                          "private": {"type": B}, "dependencies": {"type": O, "additionalProperties": {"type": S}}},
                         ["name", "version"]),
     [{"name": "left-pad", "version": "1.3.0"}, {"name": "@scope/pkg", "version": "0.0.1-beta.2", "private": True,
                                                  "dependencies": {"react": "^18.0.0"}, "license": "MIT"}],
     [{"name": "Left", "version": "1.0.0"}, {"name": "x", "version": "1.0"}, {"name": "x", "version": "1.0.0", "dependencies": {"a": 1}}])
case("feature_flags", {"type": O, "additionalProperties": obj({"enabled": {"type": B}, "rollout": {"type": I, "minimum": 0, "maximum": 100}},
                                                               ["enabled"], False)},
     [{}, {"dark_mode": {"enabled": True}, "beta": {"enabled": False, "rollout": 25}}],
     [{"x": {"rollout": 5}}, {"x": {"enabled": True, "rollout": 101}}, {"x": True}])
case("address_book", obj({"owner": {"type": S}, "entries": {"type": A, "items": {"$ref": "#/$defs/entry"}}}, ["owner", "entries"], False,
                         **{"$defs": {"entry": obj({"name": {"type": S}, "address": {"$ref": "#/$defs/address"}}, ["name"], False),
                                      "address": ADDRESS}}),
     [{"owner": "me", "entries": []}, {"owner": "me", "entries": [{"name": "A", "address": {"street": "s", "city": "c", "zip": "12345-6789", "country": "US"}}]}],
     [{"owner": "me", "entries": [{"address": {"street": "s", "city": "c", "country": "US"}}]},
      {"owner": "me", "entries": [{"name": "A", "address": {"street": "s", "city": "c", "zip": "1234", "country": "US"}}]}])

# ------------------------------------------------------------- recursion

case("tree_node", {"$ref": "#/$defs/node", "$defs": {"node": obj({"value": {"type": I}, "children": {"type": A, "items": {"$ref": "#/$defs/node"}}},
                                                                  ["value"], False)}},
     [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": []}, {"value": 3, "children": [{"value": -4}]}]}],
     [{"value": 1, "children": [{"children": []}]}, {"value": "1"}, {"value": 1, "children": [{"value": 2.5}]}])
case("linked_list", {"$defs": {"cell": obj({"head": {"type": S}, "tail": {"anyOf": [{"$ref": "#/$defs/cell"}, {"type": "null"}]}},
                                           ["head", "tail"], False)}, "$ref": "#/$defs/cell"},
     [{"head": "a", "tail": None}, {"head": "a", "tail": {"head": "b", "tail": {"head": "c", "tail": None}}}],
     [{"head": "a"}, {"head": "a", "tail": {"head": 1, "tail": None}}, {"head": "a", "tail": []}])
case("expression_ast", {"$defs": {"expr": {"anyOf": [
    obj({"num": {"type": N}}, ["num"], False),
    obj({"op": {"enum": ["+", "-", "*", "/"]}, "left": {"$ref": "#/$defs/expr"}, "right": {"$ref": "#/$defs/expr"}},
        ["op", "left", "right"], False),
    obj({"neg": {"$ref": "#/$defs/expr"}}, ["neg"], False)]}}, "$ref": "#/$defs/expr"},
    [{"num": 1}, {"op": "+", "left": {"num": 1}, "right": {"neg": {"num": 2.5}}}],
    [{"op": "%", "left": {"num": 1}, "right": {"num": 2}}, {"op": "+", "left": {"num": 1}}, {"neg": {"num": "1"}}],
    walks=30)
case("comment_thread", {"$ref": "#/definitions/comment", "definitions": {"comment": obj({
    "author": {"type": S}, "text": {"type": S, "maxLength": 500}, "replies": {"type": A, "items": {"$ref": "#/definitions/comment"}, "maxItems": 3}},
    ["author", "text"], False)}},
    [{"author": "a", "text": "first"}, {"author": "a", "text": "q", "replies": [{"author": "b", "text": "r", "replies": []}]}],
    [{"author": "a"}, {"author": "a", "text": "t", "replies": [{"author": "b", "text": "r"}] * 4}])
case("filesystem", {"$defs": {"entry": {"oneOf": [
    obj({"file": {"type": S}, "size": {"type": I, "minimum": 0}}, ["file", "size"], False),
    obj({"dir": {"type": S}, "entries": {"type": A, "items": {"$ref": "#/$defs/entry"}}}, ["dir", "entries"], False)]}},
    "$ref": "#/$defs/entry"},
    [{"file": "a.txt", "size": 0}, {"dir": "/", "entries": [{"dir": "etc", "entries": [{"file": "hosts", "size": 120}]}]}],
    [{"file": "a", "size": -1}, {"dir": "/", "entries": [{"file": "x"}]}, {"dir": "/"}])
case("json_value_recursive", {"$defs": {"v": {"anyOf": [{"type": "null"}, {"type": B}, {"type": N}, {"type": S},
                                                       {"type": A, "items": {"$ref": "#/$defs/v"}},
                                                       {"type": O, "additionalProperties": {"$ref": "#/$defs/v"}}]}},
                              "$ref": "#/$defs/v"},
     [None, [1, "a", {"b": [True, None]}], {"x": {"y": {"z": 1.5}}}], [])
case("menu_recursive_root", obj({"label": {"type": S}, "submenu": {"type": A, "items": {"$ref": "#"}}}, ["label"], False),
     [{"label": "File"}, {"label": "File", "submenu": [{"label": "Open"}, {"label": "Recent", "submenu": [{"label": "a.txt"}]}]}],
     [{"label": "File", "submenu": [{}]}, {"label": 1}])

# ---------------------------------------------------- combinators, enums

case("enum_mixed", {"enum": ["red", 1, None, True, [1, 2], {"a": "b"}]},
     ["red", 1, None, True, [1, 2], {"a": "b"}], ["blue", 2, False, [2, 1], {"a": "c"}])
case("const_object", {"const": {"kind": "ping", "v": 1}}, [{"kind": "ping", "v": 1}],
     [{"kind": "pong", "v": 1}, {"kind": "ping"}, "ping"])
case("enum_with_type_filter", {"type": S, "enum": ["a", "b", 3]}, ["a", "b"], ["c", 3])
case("anyof_string_or_int", {"anyOf": [{"type": S, "maxLength": 3}, {"type": I, "minimum": 10}]},
     ["", "abc", 10, 99999], ["abcd", 9, 10.5, None])
case("oneof_disjoint", {"oneOf": [{"type": S, "pattern": "^a"}, {"type": S, "pattern": "^b"}, {"type": I}]},
     ["apple", "banana", 7], ["cherry", 1.5, None])
case("oneof_payment", {"oneOf": [
    obj({"method": {"const": "card"}, "number": {"type": S, "pattern": "^[0-9]{16}$"}, "cvc": {"type": S, "pattern": "^[0-9]{3}$"}},
        ["method", "number", "cvc"], False),
    obj({"method": {"const": "iban"}, "iban": {"type": S, "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"}}, ["method", "iban"], False),
    obj({"method": {"const": "cash"}}, ["method"], False)]},
    [{"method": "card", "number": "4111111111111111", "cvc": "123"}, {"method": "iban", "iban": "DE89370400440532013000"}, {"method": "cash"}],
    [{"method": "card", "number": "4111", "cvc": "123"}, {"method": "iban", "iban": "de89"}, {"method": "cheque"},
     {"method": "cash", "amount": 1}])
case("allof_merge", {"allOf": [obj({"id": {"type": I}}, ["id"]), obj({"name": {"type": S}}, ["name"]),
                               {"properties": {"tags": {"type": A, "items": {"type": S}}}}]},
     [{"id": 1, "name": "a"}, {"id": 1, "name": "a", "tags": ["x"], "more": 1}],
     [{"id": 1}, {"name": "a"}, {"id": "1", "name": "a"}, {"id": 1, "name": "a", "tags": [1]}])
case("allof_ref_base", {"$defs": {"base": obj({"id": {"type": S, "format": "uuid"}, "created": {"type": S, "format": "date-time"}}, ["id"])},
                        "allOf": [{"$ref": "#/$defs/base"}, obj({"title": {"type": S}}, ["title"])]},
     [{"id": "01234567-89ab-cdef-0123-456789abcdef", "title": "t"},
      {"id": "01234567-89ab-cdef-0123-456789abcdef", "created": "1999-12-31T23:59:59Z", "title": "t"}],
     [{"title": "t"}, {"id": "nope", "title": "t"}, {"id": "01234567-89ab-cdef-0123-456789abcdef"}])
case("allof_string_keywords", {"allOf": [{"type": S}, {"minLength": 2}, {"maxLength": 4}]},
     ["ab", "abcd"], ["a", "abcde", 12])
case("anyof_with_sibling_type", {"type": O, "required": ["kind"], "anyOf": [
    {"properties": {"kind": {"const": "a"}, "x": {"type": I}}, "additionalProperties": False},
    {"properties": {"kind": {"const": "b"}, "y": {"type": S}}, "additionalProperties": False}]},
    [{"kind": "a"}, {"kind": "a", "x": 1}, {"kind": "b", "y": "s"}],
    [{"kind": "a", "y": "s"}, {"kind": "c"}, {"x": 1}, {"kind": "b", "y": 1}])
case("nullable_fields", obj({"a": {"type": [S, "null"]}, "b": {"anyOf": [{"type": I}, {"type": "null"}]},
                             "c": {"type": [A, "null"], "items": {"type": B}}}, ["a", "b", "c"], False),
     [{"a": None, "b": None, "c": None}, {"a": "x", "b": 1, "c": [True, False]}],
     [{"a": 1, "b": None, "c": None}, {"a": None, "b": "1", "c": None}, {"a": None, "b": None, "c": [1]}])
case("type_array_all", {"type": [S, I, B, "null"]}, ["x", 1, True, None], [1.5, [], {}])
case("enum_numbers", {"enum": [0, 1.5, -2, 100]}, [0, 1.5, -2, 100], [2, -1.5, "0"])
case("const_string_escapes", {"const": "quote \" backslash \\ tab \t é"}, ["quote \" backslash \\ tab \t é"],
     ["quote \" backslash \\ tab \t e", "x"])
case("enum_unicode", {"enum": ["日本", "Ελλάδα", "🙂"]}, ["日本", "Ελλάδα", "🙂"], ["日", "🙁"])

# ----------------------------------------------------------------- formats

case("format_date", {"type": S, "format": "date"}, ["2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31", "2023-11-30"],
     ["2023-02-29", "1900-02-29", "0000-01-01", "2024-13-01", "2024-04-31", "2024-1-01", "24-01-01"])
case("format_time", {"type": S, "format": "time"}, ["00:00:00Z", "23:59:59.999999+14:00", "12:00:00-05:30", "08:15:00z"],
     ["24:00:00Z", "12:60:00Z", "12:00:00", "12:00Z", "12:00:00+5:00"])
case("format_date_time", {"type": S, "format": "date-time"},
     ["2024-02-29T12:00:00Z", "1985-04-12T23:20:50.52Z", "1996-12-19T16:39:57-08:00", "2024-01-01t00:00:00z"],
     ["2024-02-30T12:00:00Z", "2024-01-01T12:00:00", "2024-01-01 12:00:00Z", "2024-01-01T12:00:60Z"])
case("format_uuid", {"type": S, "format": "uuid"},
     ["123e4567-e89b-12d3-a456-426614174000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
     ["123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000", "g23e4567-e89b-12d3-a456-426614174000"])
case("format_email", {"type": S, "format": "email"}, ["a@b.co", "first.last+tag@sub.example.com", "x_y@a-b.io"],
     ["plainaddress", "", "no-at.example.com"])
case("format_ipv4", {"type": S, "format": "ipv4"}, ["0.0.0.0", "255.255.255.255", "192.168.1.10"],
     ["256.0.0.0", "1.2.3", "01.2.3.4", "1.2.3.4.5"])
case("formats_in_object", obj({"id": {"type": S, "format": "uuid"}, "born": {"type": S, "format": "date"},
                               "seen": {"type": S, "format": "date-time"}, "mail": {"type": S, "format": "email"},
                               "ip": {"type": S, "format": "ipv4"}, "alarm": {"type": S, "format": "time"}},
                              ["id", "born", "seen", "mail", "ip", "alarm"], False),
     [{"id": "00000000-0000-4000-8000-000000000000", "born": "1990-06-15", "seen": "2025-05-05T05:05:05Z",
       "mail": "me@home.net", "ip": "8.8.8.8", "alarm": "07:00:00+00:00"}],
     [{"id": "00000000-0000-4000-8000-000000000000", "born": "1990-06-31", "seen": "2025-05-05T05:05:05Z",
       "mail": "me@home.net", "ip": "8.8.8.8", "alarm": "07:00:00+00:00"},
      {"id": "00000000-0000-4000-8000-000000000000", "born": "1990-06-15", "seen": "2025-05-05T05:05:05Z",
       "mail": "me", "ip": "8.8.8.8", "alarm": "07:00:00+00:00"}])
case("date_list", {"type": A, "items": {"type": S, "format": "date"}, "minItems": 2, "maxItems": 2},
     [["2024-01-01", "2024-12-31"]], [["2024-01-01"], ["2024-01-01", "2024-00-01"], ["2024-01-01", "2024-01-02", "2024-01-03"]])

# ---------------------------------------------------------------- patterns

case("pattern_hex_color", {"type": S, "pattern": "^#[0-9a-fA-F]{6}$"}, ["#000000", "#A1b2C3"], ["#12345", "000000", "#GGGGGG"])
case("pattern_unanchored", {"type": S, "pattern": "needle"}, ["needle", "haystack needle haystack", "needles"],
     ["", "need le", "NEEDLE"], walk=False)
case("pattern_start_only", {"type": S, "pattern": "^https://"}, ["https://", "https://example.com/path?q=1"],
     ["http://x", " https://x"])
case("pattern_end_only", {"type": S, "pattern": "\\.json$"}, [".json", "a/b/c.json"], ["a.jsonl", "json"], walk=False)
case("pattern_slug", {"type": S, "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$"}, ["a", "hello-world-2"],
     ["-a", "a-", "a--b", "Hello"])
case("pattern_semver", {"type": S, "pattern": "^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$"},
     ["1.0.0", "v10.20.30"], ["01.0.0", "1.0", "1.0.0.0"])
case("pattern_alternation_group", {"type": S, "pattern": "^(cat|dog|bird)s?$"}, ["cat", "dogs", "bird"],
     ["cow", "cats!", "Cat"])
case("pattern_escapes", {"type": S, "pattern": "^a\\.b\\[c\\]\\\\d\\\"e$"}, ["a.b[c]\\d\"e"], ["aXb[c]\\d\"e", "a.b[c]d\"e"])
case("pattern_dot", {"type": S, "pattern": "^x.y$"}, ["xay", "x\"y", "x\\y", "x\ty", "xéy"], ["xy", "x\ny", "xaay"])
case("pattern_negated_class", {"type": S, "pattern": "^[^@ ]+@[^@ ]+$"}, ["a@b", "é@ü.de"], ["a b@c", "a@@b", "@b"])
case("pattern_counts", {"type": S, "pattern": "^\\d{3}-\\d{2,}-[a-z]{0,2}x?$"}, ["123-45-", "123-456789-abx", "000-00-a"],
     ["12-45-", "123-4-", "123-45-abc"])
case("pattern_word_space", {"type": S, "pattern": "^\\w+(\\s\\w+)*$"}, ["hello", "hello world_2", "a\tb"], ["hello ", " a", "a  b"])
case("pattern_unicode_range", {"type": S, "pattern": "^[\\u0400-\\u04FF]+$"}, ["привет", "Ёж"], ["hello", "при vet"])
case("pattern_zip", {"type": S, "pattern": "^\\d{5}(-\\d{4})?$"}, ["12345", "12345-6789"], ["1234", "12345-678", "abcde"])

# ------------------------------------------------------------------ ranges

case("int_range_small", {"type": I, "minimum": 3, "maximum": 17}, [3, 9, 10, 17], [2, 18, 0, -3, 100])
case("int_range_negative", {"type": I, "minimum": -250, "maximum": -7}, [-250, -199, -100, -7], [-251, -6, 0, 7, -1000])
case("int_range_across_zero", {"type": I, "minimum": -15, "maximum": 1234}, [-15, -1, 0, 999, 1000, 1234],
     [-16, 1235, 9999, -100])
case("int_exclusive", {"type": I, "exclusiveMinimum": 0, "exclusiveMaximum": 100}, [1, 50, 99], [0, 100, -1])
case("int_min_only", {"type": I, "minimum": 1024}, [1024, 1025, 9999, 10000, 123456789012345678901234567890],
     [1023, 0, -1024, 999])
case("int_max_only", {"type": I, "maximum": -3}, [-3, -4, -1000000], [-2, 0, 3])
case("int_fraction_bounds", {"type": I, "minimum": 2.5, "maximum": 7.5}, [3, 7], [2, 8])
case("int_big_bounds", {"type": I, "minimum": -9007199254740993, "maximum": 18446744073709551615},
     [-9007199254740993, 0, 18446744073709551615], [-9007199254740994, 18446744073709551616])
case("number_range", {"type": N, "minimum": -1.5, "maximum": 2.25}, [-1.5, -1, 0, 0.5, 2, 2.25, 2.2, -0.75],
     [-1.51, 2.26, 3, -2, 2.251])
case("number_exclusive", {"type": N, "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.3}, [0.11, 0.2, 0.29999],
     [0.1, 0.3, 0.05, 0.31])
case("number_same_integer_part", {"type": N, "minimum": 3.14, "maximum": 3.15}, [3.14, 3.145, 3.15], [3.139, 3.151, 3, 4])
case("number_positive", {"type": N, "exclusiveMinimum": 0}, [0.001, 1, 12345.678], [0, -0.5, -3])
case("number_percent", {"type": N, "minimum": 0, "maximum": 100}, [0, 99.99, 100, 100.0, 42], [100.01, -0.01, 101])
case("number_negative_only", {"type": N, "maximum": -0.5}, [-0.5, -1, -1000.25], [-0.49, 0, 1])
case("int_max_and_exclusive_max", {"type": I, "minimum": 0, "maximum": 10, "exclusiveMaximum": 10}, [0, 9], [10, -1])

# ------------------------------------------------------------------ arrays

case("tuple_prefix_items", {"type": A, "prefixItems": [{"type": S}, {"type": I}, {"type": B}], "items": False, "minItems": 2},
     [["a", 1], ["a", 1, True]], [["a"], [1, "a"], ["a", 1, True, 2], []])
case("tuple_with_rest", {"type": A, "prefixItems": [{"const": "cmd"}], "items": {"type": S}, "maxItems": 4},
     [["cmd"], ["cmd", "a", "b", "c"], []], [["cmd", 1], ["x"], ["cmd", "a", "b", "c", "d"]])
case("array_min_max", {"type": A, "items": {"type": I}, "minItems": 2, "maxItems": 4}, [[1, 2], [1, 2, 3, 4]],
     [[1], [1, 2, 3, 4, 5], [1, "2"]])
case("array_exact", {"type": A, "items": {"type": N}, "minItems": 3, "maxItems": 3}, [[0, 1.5, -2]], [[0, 1], [0, 1, 2, 3]])
case("matrix", {"type": A, "items": {"type": A, "items": {"type": N}, "minItems": 2, "maxItems": 2}, "maxItems": 3},
     [[], [[1, 2]], [[1, 2], [3, 4], [5, 6]]], [[[1]], [[1, 2], [3, 4], [5, 6], [7, 8]], [[1, "2"]]])
case("array_of_enums_unique_false", {"type": A, "items": {"enum": ["r", "w", "x"]}, "uniqueItems": False},
     [[], ["r", "r", "w"]], [["rw"], [1]])
case("array_any_items", {"type": A}, [[], [1, "a", None, {"b": [2]}]], [{}, "[]"])
case("array_long_bounds", {"type": A, "items": {"type": B}, "minItems": 1, "maxItems": 2500}, [[True], [False] * 2500],
     [[], [True] * 2501])

# -------------------------------------------------------------------- misc

case("any_value_true", True, [1, "a", None, [1], {"a": {}}], [])
case("any_value_empty", {}, [1.5, False, {"x": [None]}], [])
case("boolean_only", {"type": B}, [True, False], [0, "true", None])
case("null_only", {"type": "null"}, [None], [0, "", False])
case("string_lengths", {"type": S, "minLength": 2, "maxLength": 4}, ["ab", "a\nb", "éèêë", "🙂🙂"], ["a", "abcde", "🙂"])
case("string_long_max", {"type": S, "maxLength": 2100}, ["", "x" * 2100], ["x" * 2101])
case("string_long_min", {"type": S, "minLength": 1500}, ["y" * 1500, "y" * 1600], ["y" * 1499], walks=10)
case("strict_mode", obj({"a": {"type": S}, "b": obj({"c": {"type": I}}, ["c"])}, ["a", "b"]),
     [{"a": "x", "b": {"c": 1}}], [{"a": "x", "b": {"c": 1}, "d": 1}, {"a": "x", "b": {"c": 1, "e": 2}}], strict=True)
case("additional_schema", obj({"id": {"type": I}}, ["id"], {"type": S}),
     [{"id": 1}, {"id": 1, "note": "x", "other": ""}], [{"id": 1, "note": 2}, {"note": "x"}])
case("additional_excludes_declared", obj({"a": {"type": I}, "ab": {"type": I}}, [], {"type": S}),
     [{}, {"a": 1}, {"a": 1, "ab": 2, "abc": "x", "b": "y"}, {"x": ""}], [{"a": "s"}, {"ab": "s"}, {"a": 1, "ab": "s"}])
case("required_not_declared", {"type": O, "properties": {"a": {"type": I}}, "required": ["a", "z"]},
     [{"a": 1, "z": None}, {"a": 1, "z": [1]}], [{"a": 1}, {"z": 1}])
case("false_property", obj({"a": {"type": I}, "secret": False}, ["a"]), [{"a": 1}, {"a": 1, "other": True}],
     [{"a": 1, "secret": 1}, {"a": 1, "secret": None}])
case("all_optional_many", obj({k: {"type": I} for k in "abcdefgh"}, [], False),
     [{}, {"a": 1}, {"h": 1}, {"b": 1, "d": 2, "h": 3}, {k: 0 for k in "abcdefgh"}],
     [{"i": 1}, {"a": "1"}, {"a": 1, "z": 2}])
case("mixed_required_optional", obj({"o1": {"type": S}, "r1": {"type": S}, "o2": {"type": S}, "r2": {"type": S}, "o3": {"type": S}},
                                    ["r1", "r2"], False),
     [{"r1": "a", "r2": "b"}, {"o1": "x", "r1": "a", "o2": "y", "r2": "b", "o3": "z"}, {"r1": "a", "r2": "b", "o3": "z"}],
     [{"r1": "a"}, {"o1": "x", "r2": "b"}, {"r1": "a", "r2": "b", "o4": "z"}])
case("keys_needing_escapes", obj({"quote\"key": {"type": I}, "back\\slash": {"type": I}, "new\nline": {"type": I}, "ünï": {"type": I}},
                                 [], {"type": B}),
     [{"quote\"key": 1, "back\\slash": 2, "new\nline": 3, "ünï": 4}, {"other": True}],
     [{"quote\"key": "1"}, {"ünï": True}, {"new\nline": False}])
case("empty_object_only", {"type": O, "additionalProperties": False}, [{}], [{"a": 1}, []])
case("deep_nesting", obj({"l1": obj({"l2": obj({"l3": obj({"l4": obj({"l5": {"type": I, "minimum": 0}}, ["l5"], False)}, ["l4"], False)},
                                               ["l3"], False)}, ["l2"], False)}, ["l1"], False),
     [{"l1": {"l2": {"l3": {"l4": {"l5": 0}}}}}], [{"l1": {"l2": {"l3": {"l4": {"l5": -1}}}}}, {"l1": {"l2": {"l3": {}}}}])
case("openapi_like_pet", {"$defs": {"Category": obj({"id": {"type": I}, "name": {"type": S}}),
                                    "Tag": obj({"id": {"type": I}, "name": {"type": S}})},
                          **obj({"id": {"type": I, "minimum": 1}, "category": {"$ref": "#/$defs/Category"}, "name": {"type": S},
                                 "photoUrls": {"type": A, "items": {"type": S}}, "tags": {"type": A, "items": {"$ref": "#/$defs/Tag"}},
                                 "status": {"enum": ["available", "pending", "sold"]}}, ["name", "photoUrls"])},
     [{"name": "doggie", "photoUrls": []}, {"id": 10, "category": {"id": 1, "name": "Dogs"}, "name": "rex",
                                             "photoUrls": ["u"], "tags": [{"name": "t"}], "status": "sold"}],
     [{"name": "d"}, {"name": "d", "photoUrls": [], "status": "lost"}, {"id": 0, "name": "d", "photoUrls": []}])
case("annotations_ignored", {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://ex.com/s", "title": "T",
                             "description": "D", "type": S, "examples": ["a"], "default": "a", "deprecated": False,
                             "x-vendor": {"anything": 1}}, ["a", ""], [1])
case("strict_openai_style", {"type": O, "properties": {
    "steps": {"type": A, "items": {"type": O, "properties": {"explanation": {"type": S}, "output": {"type": S}},
                                    "required": ["explanation", "output"], "additionalProperties": False}},
    "final_answer": {"type": S}}, "required": ["steps", "final_answer"], "additionalProperties": False},
    [{"steps": [{"explanation": "e", "output": "o"}], "final_answer": "42"}],
    [{"steps": [{"explanation": "e"}], "final_answer": "42"}, {"steps": [], "final_answer": 42}], strict=True)


# ------------------------------------------------------------- more forms

case("allof_one_member_closed", {"allOf": [obj({"a": {"type": I}, "b": {"type": S}}, ["a"], False), {"required": ["b"]}]},
     [{"a": 1, "b": "x"}], [{"a": 1}, {"a": 1, "b": "x", "c": 0}, {"b": "x"}])
case("ref_with_siblings", {"$defs": {"base": obj({"x": {"type": I}, "y": {"type": I}})},
                           "$ref": "#/$defs/base", "required": ["y"]},
     [{"y": 1}, {"x": 0, "y": -1}, {"x": 1, "y": 2, "z": "other"}], [{"x": 1}, {"y": "1"}, {}])
case("anyof_nested_in_allof", {"allOf": [{"type": O, "required": ["k"]},
                                         {"anyOf": [obj({"k": {"const": 1}, "v": {"type": S}}, ["v"], False),
                                                    obj({"k": {"const": 2}}, [], False)]}]},
     [{"k": 1, "v": "a"}, {"k": 2}], [{"k": 1}, {"k": 3}, {"k": 2, "v": "a"}, {"v": "a"}])
case("enum_and_const", {"enum": ["a", "b", "c"], "const": "b"}, ["b"], ["a", "c"])
case("prefix_false_item", {"type": A, "prefixItems": [{"type": I}, False]}, [[], [1]], [[1, 2], ["a"]])
case("strict_anyof_objects", {"anyOf": [obj({"cat": {"type": S}}, ["cat"]), obj({"dog": {"type": S}}, ["dog"])]},
     [{"cat": "tom"}, {"dog": "rex"}], [{"cat": "tom", "dog": "rex"}, {"fish": "x"}, {}], strict=True)
case("number_half_open_unit", {"type": N, "minimum": 0, "exclusiveMaximum": 1}, [0, 0.5, 0.999999, 0.0],
     [1, 1.0, -0.0001, 2])
case("number_negative_fractions", {"type": N, "minimum": -2.5, "maximum": -1.25}, [-2.5, -2, -1.25, -1.3, -2.49],
     [-2.51, -1.24, -1, 0, -3])
case("number_tiny_bound", {"type": N, "exclusiveMinimum": 0.001, "maximum": 0.002}, [0.0011, 0.002, 0.0015],
     [0.001, 0.00099, 0.0021, 0])
case("int_huge_exclusive", {"type": I, "exclusiveMinimum": -10000000000000000000000, "exclusiveMaximum": 10000000000000000000000},
     [-9999999999999999999999, 0, 9999999999999999999999], [-10000000000000000000000, 10000000000000000000000])
case("int_or_number_type", {"type": [I, N], "minimum": 1.5}, [1.5, 2, 100.25], [1, 1.49, -2])
case("pattern_quantifier_forms", {"type": S, "pattern": "^(?P<word>[a-z]{,3})(?:-[0-9]+?)*x{2}$"},
     ["xx", "abcxx", "ab-1-22xx"], ["abcdxx", "ab-xx", "abx"])
case("pattern_nested_groups", {"type": S, "pattern": "^((a|b)(c(d|e)?)?)+$"}, ["a", "bcd", "acebc"], ["", "c", "ad"])
case("string_min_only", {"type": S, "minLength": 3}, ["abc", "abcdef"], ["ab", ""])
case("array_nested_prefix_objects", {"type": A, "prefixItems": [obj({"x": {"type": N}}, ["x"], False),
                                                                  {"type": A, "items": {"type": I}, "maxItems": 2}],
                                     "items": {"type": "null"}},
     [[{"x": 1}], [{"x": 1.5}, [1, 2]], [{"x": 0}, [], None, None]], [[{"x": 1}, [1, 2, 3]], [{"x": 1}, [], 1], [{"y": 1}]])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "data", "json_schema")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".json"):
            os.remove(os.path.join(out, f))
    names = set()
    for i, (name, schema, valid, invalid, strict, walk, walks) in enumerate(CORPUS):
        assert name not in names, name
        names.add(name)
        doc = {"schema": schema, "valid": valid, "invalid": invalid}
        if strict:
            doc["options"] = {"strict": True}
        if not walk:
            doc["walk"] = False
        if walks is not None:
            doc["walks"] = walks
        with open(os.path.join(out, f"{i:03d}_{name}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
            f.write("\n")
    print(f"wrote {len(CORPUS)} schemas to {out}")


if __name__ == "__main__":
    main()
