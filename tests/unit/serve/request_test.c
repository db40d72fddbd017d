/* The server's request parser (src/serve/request.c): every field read with
 * its value, OpenAI's defaults, content parts joined, each wrong type or
 * value refused naming its field, unknown fields ignored, and exhausted
 * memory reported as OUT_OF_MEMORY. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poot_test.h"
#include "serve_impl.h"

static const poot__serve_limits limits = {
    .max_messages = 4, .max_tokens = 100, .max_n = 4, .max_prompts = 3};

static poot_status parse_kind(poot_arena *a, const char *body, poot__serve_kind kind,
                              poot__serve_request *r, const char **param) {
  return poot__serve_request_parse(a, body, strlen(body), kind, &limits, r, param);
}

/* Each case's arena, its last parse and the field named (setup/teardown). */
typedef struct fixture {
  poot_arena a;
  poot__serve_request r;
  poot__serve_encode_request e;
  const char *param;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  poot_arena_init(&f->a, 0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  poot_arena_deinit(&f->a);
  free(f);
  return 0;
}

/* Parses body as `kind` into f->r; it must parse. */
static void parses(fixture *f, poot__serve_kind kind, const char *body) {
  f->param = "unset";
  POOT_ASSERT_OK(parse_kind(&f->a, body, kind, &f->r, &f->param));
  assert_null(f->param);
}

/* An encoder body into f->e; it must parse. */
static void encodes(fixture *f, poot__serve_encode_kind kind, const char *body) {
  POOT_ASSERT_OK(
      poot__serve_encode_request_parse(&f->a, body, strlen(body), kind, 4, &f->e, &f->param));
}

/* A refusal (st, consumed) of `body`: INVALID_ARGUMENT, the message
 * mentions `needle` (NULL: not checked) and the field the parse named
 * (*out_param, read after it) is want_param (NULL: none). */
static void refused(poot_status st, const char *body, const char *const *out_param,
                    const char *want_param, const char *needle) {
  const char *param = *out_param;
  if (poot_status_code_of(st) != POOT_INVALID_ARGUMENT)
    fail_msg("%s: %s, not INVALID_ARGUMENT", body, poot_status_code_name(poot_status_code_of(st)));
  if (needle && !strstr(poot_status_message(st), needle))
    fail_msg("%s: '%s' does not mention '%s'", body, poot_status_message(st), needle);
  if (want_param ? !param || strcmp(param, want_param) != 0 : param != NULL)
    fail_msg("%s: param %s, not %s", body, param ? param : "NULL",
             want_param ? want_param : "NULL");
  poot_status_free(st);
}

static void test_chat_defaults(void **state) {
  fixture *f = *state;
  parses(f, POOT_SERVE_CHAT,
         "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"S\"},"
         "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
         "{\"type\":\"text\",\"text\":\"bc\"}],\"name\":\"u\"}],"
         "\"unknown_field\":{\"x\":[1,2]}}");
  const poot__serve_request *r = &f->r;
  assert_string_equal(r->model, "m");
  assert_int_equal(r->messages->len, 2);
  const poot_json *m1 = r->messages->items[1];
  const poot_json *content = poot_json_get(m1, "content");
  assert_int_equal(content->type, POOT_JSON_STRING);
  assert_int_equal(content->len, 3);
  assert_memory_equal(content->str, "abc", 3);
  assert_string_equal(poot_json_get(m1, "name")->str, "u"); /* kept for the template */
  assert_int_equal(r->max_tokens, -1);
  assert_int_equal(r->n, 1);
  assert_false(r->stream);
  assert_false(r->logprobs);
  assert_null(r->response_format);
  assert_false(r->seed_given);
  /* OpenAI's defaults, not llama.cpp's */
  assert_true(r->sampling.temperature == 1.0f);
  assert_true(r->sampling.top_p == 1.0f);
  assert_int_equal(r->sampling.top_k, 0);
  assert_true(r->sampling.min_p == 0.0f);
  assert_true(r->sampling.seed == POOT_SAMPLING_SEED_RANDOM);
  assert_int_equal(r->sampling.n_probs, 0);
}

static void test_every_field(void **state) {
  fixture *f = *state;
  const poot__serve_request *r = &f->r;
  parses(f, POOT_SERVE_CHAT,
         "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_completion_tokens\":50,"
         "\"temperature\":0.5,\"top_p\":0.9,\"top_k\":5,\"min_p\":0.1,\"presence_penalty\":-1,"
         "\"frequency_penalty\":1.5,\"repetition_penalty\":1.1,\"seed\":-1,\"stop\":[\"a\",\"bb\"],"
         "\"logit_bias\":{\"5\":-100,\"7\":2.5},\"n\":3,\"logprobs\":true,\"top_logprobs\":2,"
         "\"response_format\":{\"type\":\"json_object\"},\"stream\":true,"
         "\"stream_options\":{\"include_usage\":true},\"tools\":[]}");
  assert_int_equal(r->max_tokens, 50);
  assert_true(r->sampling.temperature == 0.5f);
  assert_true(r->sampling.top_p == 0.9f);
  assert_int_equal(r->sampling.top_k, 5);
  assert_true(r->sampling.min_p == 0.1f);
  assert_true(r->sampling.presence_penalty == -1.0f);
  assert_true(r->sampling.frequency_penalty == 1.5f);
  assert_true(r->sampling.repeat_penalty == 1.1f);
  assert_true(r->seed_given);
  assert_true(r->sampling.seed == 0x7fffffffffffffffull); /* -1 masked to 63 bits */
  assert_int_equal(r->sampling.n_stops, 2);
  assert_string_equal(r->sampling.stops[1].text, "bb");
  assert_int_equal(r->sampling.n_bias, 2);
  assert_int_equal(r->sampling.bias[0].token, 5);
  assert_true(isinf(r->sampling.bias[0].bias) && r->sampling.bias[0].bias < 0);
  assert_true(r->sampling.bias[1].bias == 2.5f);
  assert_int_equal(r->n, 3);
  assert_true(r->logprobs);
  assert_int_equal(r->top_logprobs, 2);
  assert_int_equal(r->sampling.n_probs, 2);
  assert_string_equal(r->response_format, "{\"type\":\"json_object\"}");
  assert_true(r->stream && r->include_usage);
  assert_null(r->tools); /* an empty list is no tools */
  /* logprobs without alternatives still asks the device for the chosen one */
  parses(f, POOT_SERVE_CHAT,
         "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
         "\"logprobs\":true,\"max_tokens\":null,\"stop\":\"z\"}");
  assert_int_equal(r->sampling.n_probs, 1);
  assert_int_equal(r->top_logprobs, 0);
  assert_int_equal(r->max_tokens, -1);
  assert_int_equal(r->sampling.n_stops, 1);
}

/* tools and tool_choice; an assistant call's string arguments reach the
 * template as an object (messages), and as given (messages_raw). */
static void test_tools(void **state) {
  fixture *f = *state;
  const poot__serve_request *r = &f->r;
  parses(f, POOT_SERVE_CHAT,
         "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\","
         "\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
         "{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": [1]}\"}},{\"id\":\"c2\",\"function\":"
         "{\"name\":\"g\",\"arguments\":\"not json\"}}]},{\"role\":\"tool\",\"tool_call_id\":"
         "\"c1\",\"content\":\"42\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":"
         "\"f\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},"
         "\"parallel_tool_calls\":false}");
  assert_int_equal(r->tool_choice, POOT_TOOL_CHOICE_FUNCTION);
  assert_string_equal(r->tool_choice_name, "f");
  assert_false(r->parallel_tool_calls);
  assert_int_equal(r->tools->len, 1);
  assert_ptr_not_equal(r->messages, r->messages_raw);
  const poot_json *calls = poot_json_get(r->messages->items[1], "tool_calls");
  const poot_json *args = poot_json_get(poot_json_get(calls->items[0], "function"), "arguments");
  assert_int_equal(args->type, POOT_JSON_OBJECT);
  assert_int_equal(poot_json_get(args, "a")->type, POOT_JSON_ARRAY);
  /* not JSON: the string stays */
  args = poot_json_get(poot_json_get(calls->items[1], "function"), "arguments");
  assert_int_equal(args->type, POOT_JSON_STRING);
  assert_string_equal(poot_json_get(calls->items[1], "id")->str, "c2");
  /* the raw form keeps the client's string */
  calls = poot_json_get(r->messages_raw->items[1], "tool_calls");
  args = poot_json_get(poot_json_get(calls->items[0], "function"), "arguments");
  assert_int_equal(args->type, POOT_JSON_STRING);
  assert_string_equal(poot_json_get(r->messages->items[2], "content")->str, "42");
  /* no string arguments: one message list; tool_choice defaults to auto */
  parses(f, POOT_SERVE_CHAT,
         "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
         "\"tools\":[],\"tool_choice\":\"none\"}");
  assert_ptr_equal(r->messages, r->messages_raw);
  assert_null(r->tools);
  assert_int_equal(r->tool_choice, POOT_TOOL_CHOICE_NONE);
  assert_true(r->parallel_tool_calls);
}

/* image_url parts: a base64 data: URL decoded into the request's images; the
 * content the template sees is the list of parts with {"type":"image"}. */
static void test_images(void **state) {
  fixture *f = *state;
  const poot__serve_request *r = &f->r;
  parses(f, POOT_SERVE_CHAT,
         "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
         "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,aGVsbG8=\"}},"
         "{\"type\":\"image_url\",\"image_url\":\"data:image/jpeg;base64,AAEC\"}]}]}");
  assert_int_equal(r->n_images, 2);
  assert_int_equal(r->images[0].len, 5);
  assert_memory_equal(r->images[0].data, "hello", 5);
  assert_int_equal(r->images[1].len, 3);
  assert_int_equal(r->images[1].data[2], 2);
  const poot_json *content = poot_json_get(r->messages->items[0], "content");
  assert_int_equal(content->type, POOT_JSON_ARRAY);
  assert_int_equal(content->len, 3);
  assert_string_equal(poot_json_get(content->items[0], "text")->str, "A");
  assert_string_equal(poot_json_get(content->items[1], "type")->str, "image");
  assert_null(poot_json_get(content->items[1], "image_url"));
  static const char *const bad[] = {
      "\"https://x/y.png\"", "\"data:image/png,abc\"", "\"data:image/png;base64,a\"",
      "\"data:image/png;base64,ab$d\"", "\"data:image/png;base64,\"", "3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char body[256];
    snprintf(body, sizeof body,
             "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
             "\"image_url\":{\"url\":%s}}]}]}",
             bad[i]);
    refused(parse_kind(&f->a, body, POOT_SERVE_CHAT, &f->r, &f->param), body, &f->param, "messages",
            NULL);
  }
}

/* /v1/embeddings and /v1/rerank bodies (src/serve/encoder.c). */
static void test_encode(void **state) {
  fixture *f = *state;
  const poot__serve_encode_request *r = &f->e;
  const char *b = "{\"input\":[\"ab\",[1,2,3]],\"encoding_format\":\"base64\",\"dimensions\":384,"
                  "\"model\":\"m\"}";
  encodes(f, POOT_SERVE_EMBED, b);
  assert_int_equal(r->n_inputs, 2);
  assert_int_equal(r->inputs[0].len, 2);
  assert_int_equal(r->inputs[1].n_ids, 3);
  assert_int_equal(r->inputs[1].ids[2], 3);
  assert_true(r->base64);
  assert_int_equal(r->dimensions, 384);
  assert_string_equal(r->model, "m");
  b = "{\"input\":[5,6]}";
  encodes(f, POOT_SERVE_EMBED, b);
  assert_int_equal(r->n_inputs, 1);
  assert_int_equal(r->inputs[0].n_ids, 2);
  assert_int_equal(r->dimensions, -1);
  b = "{\"query\":\"q\",\"documents\":[\"x\",{\"text\":\"yz\"}],\"top_n\":5,"
      "\"return_documents\":true}";
  encodes(f, POOT_SERVE_RERANK, b);
  assert_int_equal(r->n_inputs, 2);
  assert_int_equal(r->inputs[1].len, 2);
  assert_int_equal(r->top_n, 2); /* at most the documents */
  assert_true(r->return_documents);
  static const struct {
    poot__serve_encode_kind kind;
    const char *body, *param;
  } bad[] = {
      {POOT_SERVE_EMBED, "{}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":[]}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":\"\"}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":[[1,-2]]}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":3}", "input"},
      {POOT_SERVE_EMBED, "{\"input\":\"a\",\"encoding_format\":\"int8\"}", "encoding_format"},
      {POOT_SERVE_EMBED, "{\"input\":\"a\",\"dimensions\":0}", "dimensions"},
      {POOT_SERVE_EMBED, "{\"input\":\"a\",\"model\":1}", "model"},
      {POOT_SERVE_EMBED, "{\"input\":\"a\",\"truncate\":1}", "truncate"},
      {POOT_SERVE_RERANK, "{\"documents\":[\"a\"]}", "query"},
      {POOT_SERVE_RERANK, "{\"query\":\"q\"}", "documents"},
      {POOT_SERVE_RERANK, "{\"query\":\"q\",\"documents\":[1]}", "documents"},
      {POOT_SERVE_RERANK, "{\"query\":\"q\",\"documents\":[\"a\"],\"top_n\":0}", "top_n"},
      {POOT_SERVE_RERANK, "{\"query\":\"q\",\"documents\":[\"a\"],\"return_documents\":1}",
       "return_documents"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    refused(poot__serve_encode_request_parse(&f->a, bad[i].body, strlen(bad[i].body), bad[i].kind,
                                             4, &f->e, &f->param),
            bad[i].body, &f->param, bad[i].param, NULL);
  refused(poot__serve_encode_request_parse(&f->a, "[", 1, POOT_SERVE_EMBED, 4, &f->e, &f->param),
          "[", &f->param, NULL, "not valid JSON");
}

static void test_prompts(void **state) {
  fixture *f = *state;
  const poot__serve_request *r = &f->r;
  parses(f, POOT_SERVE_COMPLETION, "{\"prompt\":\"Once\",\"logprobs\":3}");
  assert_int_equal(r->n_prompts, 1);
  assert_string_equal(r->prompts[0].text, "Once");
  assert_true(r->logprobs);
  assert_int_equal(r->top_logprobs, 3);
  parses(f, POOT_SERVE_COMPLETION, "{\"prompt\":[1,2,3]}");
  assert_int_equal(r->n_prompts, 1);
  assert_null(r->prompts[0].text);
  assert_int_equal(r->prompts[0].n_ids, 3);
  assert_int_equal(r->prompts[0].ids[2], 3);
  parses(f, POOT_SERVE_COMPLETION, "{\"prompt\":[\"a\",[7,8]]}");
  assert_int_equal(r->n_prompts, 2);
  assert_string_equal(r->prompts[0].text, "a");
  assert_int_equal(r->prompts[1].n_ids, 2);
  assert_int_equal(r->prompts[1].ids[0], 7);
}

typedef struct bad_case {
  poot__serve_kind kind;
  const char *body, *param, *needle;
} bad_case;

static void test_errors(void **state) {
#define MSG "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
  static const bad_case cases[] = {
      {POOT_SERVE_CHAT, "{\"messages\":[", NULL, "not valid JSON"},
      {POOT_SERVE_CHAT, "[1]", NULL, "JSON object"},
      {POOT_SERVE_CHAT, "{}", "messages", "required"},
      {POOT_SERVE_CHAT, "{\"messages\":\"hi\"}", "messages", "list"},
      {POOT_SERVE_CHAT, "{\"messages\":[]}", "messages", "empty"},
      {POOT_SERVE_CHAT, "{\"messages\":[1,1,1,1,1]}", "messages", "at most 4"},
      {POOT_SERVE_CHAT, "{\"messages\":[{\"content\":\"x\"}]}", "messages", "role"},
      {POOT_SERVE_CHAT, "{\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]}", "messages",
       "wizard"},
      {POOT_SERVE_CHAT, "{\"messages\":[{\"role\":\"user\"}]}", "messages", "no 'content'"},
      {POOT_SERVE_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", "messages",
       "string or a list"},
      {POOT_SERVE_CHAT,
       "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}", "messages",
       "image_url"},
      {POOT_SERVE_CHAT, MSG "\"model\":3}", "model", "string"},
      {POOT_SERVE_CHAT, MSG "\"tools\":{}}", "tools", "list"},
      {POOT_SERVE_CHAT, MSG "\"tools\":[{\"type\":\"function\"}]}", "tools", "tools[0]"},
      {POOT_SERVE_CHAT, MSG "\"tool_choice\":\"always\"}", "tool_choice", "always"},
      {POOT_SERVE_CHAT, MSG "\"tool_choice\":\"required\"}", "tool_choice", "needs 'tools'"},
      {POOT_SERVE_CHAT, MSG "\"tool_choice\":{\"type\":\"function\"}}", "tool_choice",
       "name"},
      {POOT_SERVE_CHAT,
       MSG "\"tools\":[{\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\","
           "\"response_format\":{\"type\":\"json_object\"}}",
       "tool_choice", "give one"},
      {POOT_SERVE_CHAT, MSG "\"parallel_tool_calls\":1}", "parallel_tool_calls", "true or false"},
      {POOT_SERVE_CHAT, MSG "\"temperature\":\"hot\"}", "temperature", "number"},
      {POOT_SERVE_CHAT, MSG "\"temperature\":2.5}", "temperature", "2.5"},
      {POOT_SERVE_CHAT, MSG "\"top_p\":0}", "top_p", "range"},
      {POOT_SERVE_CHAT, MSG "\"top_k\":1.5}", "top_k", "integer"},
      {POOT_SERVE_CHAT, MSG "\"min_p\":-0.1}", "min_p", "range"},
      {POOT_SERVE_CHAT, MSG "\"presence_penalty\":3}", "presence_penalty", "range"},
      {POOT_SERVE_CHAT, MSG "\"frequency_penalty\":true}", "frequency_penalty", "number"},
      {POOT_SERVE_CHAT, MSG "\"repetition_penalty\":0}", "repetition_penalty", "range"},
      {POOT_SERVE_CHAT, MSG "\"seed\":\"1\"}", "seed", "integer"},
      {POOT_SERVE_CHAT, MSG "\"max_tokens\":0}", "max_tokens", "range"},
      {POOT_SERVE_CHAT, MSG "\"max_tokens\":101}", "max_tokens", "allows (100)"},
      {POOT_SERVE_CHAT, MSG "\"max_completion_tokens\":-3}", "max_completion_tokens", "range"},
      {POOT_SERVE_CHAT, MSG "\"n\":0}", "n", "range"},
      {POOT_SERVE_CHAT, MSG "\"n\":5}", "n", "range"},
      {POOT_SERVE_CHAT, MSG "\"stream\":1}", "stream", "true or false"},
      {POOT_SERVE_CHAT, MSG "\"stream_options\":[]}", "stream_options", "object"},
      {POOT_SERVE_CHAT, MSG "\"stop\":[\"\"]}", "stop", "1 to 127"},
      {POOT_SERVE_CHAT, MSG "\"stop\":[1]}", "stop", "string"},
      {POOT_SERVE_CHAT,
       MSG "\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\","
           "\"m\",\"n\",\"o\",\"p\",\"q\"]}",
       "stop", "at most 16"},
      {POOT_SERVE_CHAT, MSG "\"logit_bias\":[1]}", "logit_bias", "object"},
      {POOT_SERVE_CHAT, MSG "\"logit_bias\":{\"x\":1}}", "logit_bias", "token id"},
      {POOT_SERVE_CHAT, MSG "\"logit_bias\":{\"1\":101}}", "logit_bias", "-100, 100"},
      {POOT_SERVE_CHAT, MSG "\"logprobs\":1}", "logprobs", "true or false"},
      {POOT_SERVE_CHAT, MSG "\"top_logprobs\":2}", "top_logprobs", "needs"},
      {POOT_SERVE_CHAT, MSG "\"logprobs\":true,\"top_logprobs\":21}", "top_logprobs", "range"},
      {POOT_SERVE_CHAT, MSG "\"response_format\":\"json\"}", "response_format", "object"},
      {POOT_SERVE_CHAT, MSG "\"response_format\":{\"type\":\"xml\"}}", "response_format", "xml"},
      {POOT_SERVE_CHAT, MSG "\"response_format\":{\"type\":\"json_schema\"}}", "response_format",
       "schema"},
      {POOT_SERVE_CHAT, MSG "\"tools\":{}}", "tools", "list"},
      {POOT_SERVE_COMPLETION, "{}", "prompt", "required"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":5}", "prompt", "a string"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":[]}", "prompt", "a string"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":[1,-2]}", "prompt", "token ids"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":[[]]}", "prompt", "empty list"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":[\"a\",\"b\",\"c\",\"d\"]}", "prompt", "at most 3"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":[\"a\",{}]}", "prompt", "prompt 1"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":\"a\",\"logprobs\":true}", "logprobs", "integer"},
      {POOT_SERVE_COMPLETION, "{\"prompt\":\"a\",\"echo\":true}", "echo", "not supported"},
  };
#undef MSG
  fixture *f = *state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    f->param = "unset";
    refused(parse_kind(&f->a, cases[i].body, cases[i].kind, &f->r, &f->param), cases[i].body,
            &f->param, cases[i].param, cases[i].needle);
  }
}

static poot_status oom_attempt(void *ctx) {
  (void)ctx;
  poot_arena a;
  poot_arena_init(&a, 0);
  poot__serve_request r;
  const char *param = NULL;
  poot_status st = parse_kind(
      &a,
      "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}]}],"
      "\"stop\":[\"x\"],\"logit_bias\":{\"3\":1},\"response_format\":{\"type\":\"json_object\"}}",
      POOT_SERVE_CHAT, &r, &param);
  poot_arena_deinit(&a);
  return st;
}

static void test_oom(void **state) {
  (void)state;
  assert_true(poot_test_oom_sweep("serve request", oom_attempt, NULL, 10000) > 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_chat_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_field, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prompts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test(test_oom),
      cmocka_unit_test_setup_teardown(test_tools, setup, teardown),
      cmocka_unit_test_setup_teardown(test_images, setup, teardown),
      cmocka_unit_test_setup_teardown(test_encode, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
