// llama.cpp's chat output parser (common_chat_parse, common/chat.cpp) as a protocol-1
// implementation (docs/PROTOCOL.md): one JSON request per line on stdin, one reply per line.
//
//   conformance_llamacpp --template models/templates/Qwen-Qwen3-0.6B.jinja \
//       --name qwen3 --version 0.3.36 --options '{"profile": "qwen3"}'
//
// The parser is set up as llama-server sets it up for a chat completion request with one user
// message and the server's defaults (tools/server/server-context.cpp, server-common.cpp,
// server-schema.cpp): the chat template is loaded with common_chat_templates_init, thinking is
// on where the template supports it (`--reasoning auto`), the template is applied with
// reasoning_format deepseek (common_params' default; `--reasoning-format`'s help calls it
// `auto`, which parses the same), and the result's format, generation prompt and serialized
// PEG parser become the request's common_chat_parser_params.
//
// A stream request runs task_result_state::update_chat_msg (server-task.cpp) per chunk: the
// chunk's text is appended to the generated text, common_chat_parse(text, is_partial=true) parses
// all of it, and when the message is not empty the delta is common_chat_msg_diff::compute_diffs
// against the previous message (reasoning_content_delta to thinking, content_delta to the
// answer). The end of the stream is the final result: update_chat_msg("", is_partial=false). A
// whole request is the non-streaming final result: one parse of the message with
// is_partial=false. Tool calls the parser finds are not part of the protocol and are left out.
// A chunk's native reasoning (a field llama-server never receives) goes to thinking as is.

#include "chat.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using json = nlohmann::ordered_json;

namespace {

struct settings {
    std::string template_path;
    std::string name    = "llama.cpp common_chat_parse";
    std::string version = "unknown";
    json        options = json::object();
};

struct parser_setup {
    common_chat_parser_params stream;
    common_chat_parser_params whole;
    std::string               format_name;
};

std::string read_file(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// What llama-server does at start-up and per request, up to the parser parameters.
parser_setup make_parser(const std::string & template_source) {
    common_chat_templates_ptr templates = common_chat_templates_init(nullptr, template_source);
    // server-context.cpp: enable_thinking = enable_reasoning != 0 && template supports it
    const bool enable_thinking = common_chat_templates_support_enable_thinking(templates.get());

    common_chat_msg user;
    user.role    = "user";
    user.content = "Hello";

    common_chat_templates_inputs inputs;
    inputs.messages              = { user };
    inputs.use_jinja             = true;
    inputs.add_generation_prompt = true;
    inputs.reasoning_format      = COMMON_REASONING_FORMAT_DEEPSEEK;
    inputs.enable_thinking       = enable_thinking;
    const common_chat_params chat_params = common_chat_templates_apply(templates.get(), inputs);

    common_chat_parser_params params;
    params.format            = chat_params.format;
    params.reasoning_format  = COMMON_REASONING_FORMAT_DEEPSEEK;
    params.generation_prompt = chat_params.generation_prompt;
    if (!chat_params.parser.empty()) {
        params.parser.load(chat_params.parser);
    }
    parser_setup setup;
    setup.stream = params;
    setup.whole  = params;
    // server-schema.cpp: reasoning_in_content = stream && reasoning_format == deepseek-legacy
    setup.stream.reasoning_in_content = false;
    setup.whole.reasoning_in_content  = false;
    setup.format_name                 = common_chat_format_name(chat_params.format);
    std::cerr << "conformance_llamacpp: format " << setup.format_name << ", thinking "
              << (enable_thinking ? "on" : "off") << ", generation prompt " << json(chat_params.generation_prompt).dump(-1, ' ', false, json::error_handler_t::replace)
              << std::endl;
    return setup;
}

std::string text_of(const json & value) {
    return value.is_string() ? value.get<std::string>() : std::string();
}

// task_result_state::update_chat_msg: parse all the text so far, diff against the last message.
struct stream_state {
    const common_chat_parser_params & params;
    std::string                       generated_text;
    common_chat_msg                   chat_msg;

    json update(const std::string & text_added, bool is_partial) {
        generated_text += text_added;
        json delta                = { { "assistant", "" }, { "thinking", "" } };
        common_chat_msg new_msg   = common_chat_parse(generated_text, is_partial, params);
        if (new_msg.empty()) {
            return delta;
        }
        std::string assistant;
        std::string thinking;
        for (const auto & diff : common_chat_msg_diff::compute_diffs(chat_msg, new_msg)) {
            thinking += diff.reasoning_content_delta;
            assistant += diff.content_delta;
        }
        chat_msg           = new_msg;
        delta["assistant"] = assistant;
        delta["thinking"]  = thinking;
        return delta;
    }
};

json stream_reply(const parser_setup & setup, const json & chunks) {
    stream_state state{ setup.stream, "", {} };
    json         deltas = json::array();
    for (const auto & chunk : chunks) {
        json delta = state.update(text_of(chunk.value("content", json())), true);
        delta["thinking"] = text_of(chunk.value("reasoning", json())) + delta["thinking"].get<std::string>();
        deltas.push_back(delta);
    }
    deltas.push_back(state.update("", false));
    return { { "deltas", deltas } };
}

json whole_reply(const parser_setup & setup, const json & request) {
    common_chat_msg msg = common_chat_parse(text_of(request.value("content", json())), false, setup.whole);
    return { { "assistant", msg.content },
             { "thinking", text_of(request.value("reasoning", json())) + msg.reasoning_content } };
}

json answer(const settings & config, const parser_setup & setup, const json & request) {
    const std::string op = request.value("op", "");
    if (op == "hello") {
        if (request.value("protocol", 0) != 1) {
            return { { "error", "only protocol 1 is spoken" } };
        }
        return {
            { "protocol", 1 },
            { "implementation",
             { { "name", config.name }, { "version", config.version }, { "language", "c++" },
                { "chat_format", setup.format_name } } },
            { "options", config.options },
        };
    }
    json reply = { { "id", request.value("id", "") } };
    try {
        json result;
        if (op == "stream") {
            result = stream_reply(setup, request.at("chunks"));
        } else if (op == "whole") {
            result = whole_reply(setup, request);
        } else {
            reply["unsupported"] = "op " + op + " is not implemented";
            return reply;
        }
        for (auto & item : result.items()) {
            reply[item.key()] = item.value();
        }
    } catch (const std::exception & error) {
        reply["error"] = error.what();
    }
    return reply;
}

settings parse_arguments(int argc, char ** argv) {
    settings config;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) {
            throw std::runtime_error("missing value after " + flag);
        }
        const std::string value = argv[++i];
        if (flag == "--template") {
            config.template_path = value;
        } else if (flag == "--name") {
            config.name = value;
        } else if (flag == "--version") {
            config.version = value;
        } else if (flag == "--options") {
            config.options = json::parse(value);
        } else {
            throw std::runtime_error("unknown argument " + flag);
        }
    }
    if (config.template_path.empty()) {
        throw std::runtime_error("--template PATH is required");
    }
    return config;
}

}  // namespace

int main(int argc, char ** argv) {
    // Replies go to the original standard output; anything the library prints goes to stderr.
    const int replies_fd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    FILE * replies = fdopen(replies_fd, "w");
    if (replies == nullptr) {
        return 2;
    }
    settings     config;
    parser_setup setup;
    try {
        config = parse_arguments(argc, argv);
        setup  = make_parser(read_file(config.template_path));
    } catch (const std::exception & error) {
        std::cerr << "conformance_llamacpp: " << error.what() << std::endl;
        return 2;
    }
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        json request;
        try {
            request = json::parse(line);
        } catch (const std::exception & error) {
            std::cerr << "conformance_llamacpp: bad request: " << error.what() << std::endl;
            return 2;
        }
        if (request.value("op", "") == "bye") {
            break;
        }
        // llama-server writes its JSON with invalid UTF-8 replaced (json::dump_safe).
        const std::string out = answer(config, setup, request).dump(-1, ' ', false, json::error_handler_t::replace);
        std::fputs(out.c_str(), replies);
        std::fputc('\n', replies);
        std::fflush(replies);
    }
    return 0;
}
