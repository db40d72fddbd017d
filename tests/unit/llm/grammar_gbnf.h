/* Grammars shared by the grammar tests and the mask benchmark. */
#ifndef POOT_TESTS_GRAMMAR_GBNF_H
#define POOT_TESTS_GRAMMAR_GBNF_H

static const char *const JSON_GBNF =
    "# any JSON value (after llama.cpp's grammars/json.gbnf)\n"
    "root   ::= ws value\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
    "string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" "
    "[0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
    "number ::= \"-\"? ([0-9] | [1-9] [0-9]{0,15}) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)? ws\n"
    "ws     ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

#endif
