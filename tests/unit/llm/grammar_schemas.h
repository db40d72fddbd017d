/* Grammars of JSON-Schema shape, written by hand in the form a schema compiler emits
 * (after llama.cpp's json-schema-to-grammar: one rule per property, shared primitives),
 * each with a document that matches it. Shared by grammar_test (the mask against per-token
 * accepts at every step over a small vocabulary) and grammar_bench_test (Llama-3). */
#ifndef POOT_TESTS_GRAMMAR_SCHEMAS_H
#define POOT_TESTS_GRAMMAR_SCHEMAS_H

#define SCHEMA_PRIMS                                                                            \
  "space ::= | \" \" | \"\\n\" [ \\t]{0,20}\n"                                                  \
  "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n"       \
  "string ::= \"\\\"\" char* \"\\\"\" space\n"                                                  \
  "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"                                                 \
  "integer ::= (\"-\"? integral-part) space\n"                                                  \
  "decimal-part ::= [0-9]{1,16}\n"                                                              \
  "number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n" \
  "boolean ::= (\"true\" | \"false\") space\n"                                                  \
  "string-list ::= \"[\" space (string (\",\" space string)*)? \"]\" space\n"

typedef struct grammar_schema {
  const char *name, *gbnf, *doc;
} grammar_schema;

static const grammar_schema GRAMMAR_SCHEMAS[] = {
    {"person",
     "root ::= \"{\" space name-kv \",\" space age-kv \",\" space email-kv \",\" space tags-kv "
     "\",\" space address-kv \"}\" space\n"
     "name-kv ::= \"\\\"name\\\"\" space \":\" space string\n"
     "age-kv ::= \"\\\"age\\\"\" space \":\" space integer\n"
     "email-kv ::= \"\\\"email\\\"\" space \":\" space string\n"
     "tags-kv ::= \"\\\"tags\\\"\" space \":\" space string-list\n"
     "address-kv ::= \"\\\"address\\\"\" space \":\" space address\n"
     "address ::= \"{\" space street-kv \",\" space city-kv \",\" space zip-kv \"}\" space\n"
     "street-kv ::= \"\\\"street\\\"\" space \":\" space string\n"
     "city-kv ::= \"\\\"city\\\"\" space \":\" space string\n"
     "zip-kv ::= \"\\\"zip\\\"\" space \":\" space string\n" SCHEMA_PRIMS,
     "{\n  \"name\": \"Ada Lovelace\",\n  \"age\": 36,\n  \"email\": \"ada@example.org\",\n"
     "  \"tags\": [\"mathematician\", \"writer\", \"analyst\"],\n"
     "  \"address\": {\"street\": \"12 St James's Square\", \"city\": \"London\", \"zip\": "
     "\"SW1Y 4JH\"}\n}"},
    {"order",
     "root ::= \"{\" space id-kv \",\" space status-kv \",\" space items-kv \",\" space paid-kv "
     "\"}\" space\n"
     "id-kv ::= \"\\\"id\\\"\" space \":\" space integer\n"
     "status-kv ::= \"\\\"status\\\"\" space \":\" space status\n"
     "status ::= (\"\\\"pending\\\"\" | \"\\\"shipped\\\"\" | \"\\\"delivered\\\"\") space\n"
     "items-kv ::= \"\\\"items\\\"\" space \":\" space items\n"
     "items ::= \"[\" space (item (\",\" space item)*)? \"]\" space\n"
     "item ::= \"{\" space sku-kv \",\" space qty-kv \",\" space price-kv \"}\" space\n"
     "sku-kv ::= \"\\\"sku\\\"\" space \":\" space string\n"
     "qty-kv ::= \"\\\"qty\\\"\" space \":\" space integer\n"
     "price-kv ::= \"\\\"price\\\"\" space \":\" space number\n"
     "paid-kv ::= \"\\\"paid\\\"\" space \":\" space boolean\n" SCHEMA_PRIMS,
     "{\"id\": 48213, \"status\": \"shipped\", \"items\": [{\"sku\": \"KB-87\", \"qty\": 2, "
     "\"price\": 49.5}, {\"sku\": \"MOUSE-3\", \"qty\": 1, \"price\": 19.99}, {\"sku\": "
     "\"USB-C \\\"long\\\"\", \"qty\": 10, \"price\": 3.25e0}], \"paid\": true}"},
    {"service",
     "root ::= \"{\" space service-kv \",\" space replicas-kv \",\" space env-kv \",\" space "
     "limits-kv \",\" space enabled-kv \"}\" space\n"
     "service-kv ::= \"\\\"service\\\"\" space \":\" space string\n"
     "replicas-kv ::= \"\\\"replicas\\\"\" space \":\" space integer\n"
     "env-kv ::= \"\\\"env\\\"\" space \":\" space env\n"
     "env ::= \"[\" space (var (\",\" space var)*)? \"]\" space\n"
     "var ::= \"{\" space key-kv \",\" space value-kv \"}\" space\n"
     "key-kv ::= \"\\\"key\\\"\" space \":\" space string\n"
     "value-kv ::= \"\\\"value\\\"\" space \":\" space string\n"
     "limits-kv ::= \"\\\"limits\\\"\" space \":\" space limits\n"
     "limits ::= \"{\" space cpu-kv \",\" space memory-kv \"}\" space\n"
     "cpu-kv ::= \"\\\"cpu\\\"\" space \":\" space number\n"
     "memory-kv ::= \"\\\"memory\\\"\" space \":\" space string\n"
     "enabled-kv ::= \"\\\"enabled\\\"\" space \":\" space boolean\n" SCHEMA_PRIMS,
     "{\n  \"service\": \"checkout-api\",\n  \"replicas\": 3,\n  \"env\": [\n"
     "    {\"key\": \"LOG_LEVEL\", \"value\": \"info\"},\n"
     "    {\"key\": \"DATABASE_URL\", \"value\": \"postgres://db.internal:5432/shop\"}\n  ],\n"
     "  \"limits\": {\"cpu\": 1.5, \"memory\": \"512Mi\"},\n  \"enabled\": false\n}"},
    {"tool_call",
     "root ::= \"{\" space tool-kv \",\" space arguments-kv \",\" space reason-kv \"}\" space\n"
     "tool-kv ::= \"\\\"tool\\\"\" space \":\" space tool\n"
     "tool ::= (\"\\\"search\\\"\" | \"\\\"calculator\\\"\" | \"\\\"weather\\\"\") space\n"
     "arguments-kv ::= \"\\\"arguments\\\"\" space \":\" space arguments\n"
     "arguments ::= \"{\" space query-kv \",\" space max-results-kv \"}\" space\n"
     "query-kv ::= \"\\\"query\\\"\" space \":\" space string\n"
     "max-results-kv ::= \"\\\"max_results\\\"\" space \":\" space integer\n"
     "reason-kv ::= \"\\\"reason\\\"\" space \":\" space string\n" SCHEMA_PRIMS,
     "{\"tool\": \"weather\", \"arguments\": {\"query\": \"Z\xc3\xbcrich, tomorrow "
     "afternoon\", \"max_results\": 5}, \"reason\": \"The user asked whether to take an "
     "umbrella \\u2014 a forecast answers that.\"}"},
    {"calendar",
     "root ::= \"{\" space events-kv \",\" space count-kv \"}\" space\n"
     "events-kv ::= \"\\\"events\\\"\" space \":\" space events\n"
     "events ::= \"[\" space (event (\",\" space event)*)? \"]\" space\n"
     "event ::= \"{\" space date-kv \",\" space title-kv \",\" space attendees-kv \",\" space "
     "priority-kv \"}\" space\n"
     "date-kv ::= \"\\\"date\\\"\" space \":\" space date\n"
     "date ::= \"\\\"\" [0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | "
     "[1-2] [0-9] | \"3\" [0-1] ) \"\\\"\" space\n"
     "title-kv ::= \"\\\"title\\\"\" space \":\" space string\n"
     "attendees-kv ::= \"\\\"attendees\\\"\" space \":\" space string-list\n"
     "priority-kv ::= \"\\\"priority\\\"\" space \":\" space integer\n"
     "count-kv ::= \"\\\"count\\\"\" space \":\" space integer\n" SCHEMA_PRIMS,
     "{\"events\": [\n  {\"date\": \"2026-12-03\", \"title\": \"Design review\", "
     "\"attendees\": [\"ana\", \"bo\", \"chen\"], \"priority\": 2},\n"
     "  {\"date\": \"2026-12-24\", \"title\": \"Release 1.4 (freeze at noon)\", \"attendees\": "
     "[], \"priority\": 1}\n], \"count\": 2}"},
    {"product",
     "root ::= \"{\" space product-kv \"}\" space\n"
     "product-kv ::= \"\\\"product\\\"\" space \":\" space product\n"
     "product ::= \"{\" space name-kv \",\" space price-kv \",\" space in-stock-kv \",\" space "
     "categories-kv \",\" space dimensions-kv \"}\" space\n"
     "name-kv ::= \"\\\"name\\\"\" space \":\" space string\n"
     "price-kv ::= \"\\\"price\\\"\" space \":\" space number\n"
     "in-stock-kv ::= \"\\\"in_stock\\\"\" space \":\" space boolean\n"
     "categories-kv ::= \"\\\"categories\\\"\" space \":\" space categories\n"
     "categories ::= \"[\" space (category (\",\" space category)*)? \"]\" space\n"
     "category ::= (\"\\\"kitchen\\\"\" | \"\\\"garden\\\"\" | \"\\\"tools\\\"\" | "
     "\"\\\"outdoor\\\"\") space\n"
     "dimensions-kv ::= \"\\\"dimensions\\\"\" space \":\" space dimensions\n"
     "dimensions ::= \"{\" space w-kv \",\" space h-kv \",\" space d-kv \"}\" space\n"
     "w-kv ::= \"\\\"w\\\"\" space \":\" space number\n"
     "h-kv ::= \"\\\"h\\\"\" space \":\" space number\n"
     "d-kv ::= \"\\\"d\\\"\" space \":\" space number\n" SCHEMA_PRIMS,
     "{\"product\": {\"name\": \"Cast-iron skillet, 28 cm\", \"price\": 39.9, \"in_stock\": "
     "true, \"categories\": [\"kitchen\", \"outdoor\"], \"dimensions\": {\"w\": 28, \"h\": 5.5, "
     "\"d\": 48.25}}}"},
    {"bounded",
     "root ::= \"{\" space name-kv \",\" space title-kv \",\" space user-kv \",\" space "
     "email-kv \",\" space code-kv \"}\" space\n"
     "name-kv ::= \"\\\"name\\\"\" space \":\" space name\n"
     "name ::= \"\\\"\" [0-9a-z] ([\\-0-9a-z]* [0-9a-z])? \"\\\"\" space\n"
     "title-kv ::= \"\\\"title\\\"\" space \":\" space title\n"
     "title ::= \"\\\"\" char{1,100} \"\\\"\" space\n"
     "code-kv ::= \"\\\"code\\\"\" space \":\" space code\n"
     "code ::= \"\\\"\" [0-9A-Z]{36} \"\\\"\" space\n"
     "user-kv ::= \"\\\"user\\\"\" space \":\" space user\n"
     "user ::= \"\\\"\" [0-9_a-z]{3,16} \"\\\"\" space\n"
     "email-kv ::= \"\\\"email\\\"\" space \":\" space email\n"
     "email ::= \"\\\"\" atom (\".\" atom)* \"@\" label (\".\" label)+ \"\\\"\" space\n"
     "atom ::= [A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]+\n"
     "label ::= [A-Za-z0-9] ([A-Za-z0-9\\-]* [A-Za-z0-9])?\n" SCHEMA_PRIMS,
     "{\"name\": \"kube-dns-7f9c\", \"title\": \"Quarterly review of the budget and the hiring "
     "plan \\u2014 Z\xc3\xbcrich "
     "office\", \"user\": \"ann_lee_42\", \"email\": \"ann.lee+ops@mail.example.com\", \"code\": "
     "\"7F3K9Q2M8X4ZL1P6W0RT5YB3NV8C2H4J9D0S\"}"},
};

#define GRAMMAR_SCHEMA_COUNT (sizeof GRAMMAR_SCHEMAS / sizeof *GRAMMAR_SCHEMAS)

#endif
