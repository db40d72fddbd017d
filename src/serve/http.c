/* The thin wrapper over libmicrohttpd (Debian's libmicrohttpd-dev): one
 * thread per connection, so a handler may block while its request runs and
 * a streamed body may wait for the next token. The body is gathered up to
 * max_body_bytes; a larger one is dropped (a Content-Length past it is
 * answered at once) and the handler sees body_too_large. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "serve_impl.h"

struct poot__http_server {
  struct MHD_Daemon *daemon;
  poot__http_handler handler;
  void *ctx;
  poot__http_options o;
  uint16_t port;
};

/* What one request gathers while its body comes in. */
typedef struct conn_state {
  poot_strbuf body;
  bool too_large;
} conn_state;

bool poot__http_peer_gone(int fd) {
  if (fd < 0) return false;
  struct pollfd p = {.fd = fd, .events = POLLRDHUP};
  if (poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  poot__http_stream *s = cls;
  long n = s->read(s->ctx, buf, max);
  if (n == -1) return MHD_CONTENT_READER_END_OF_STREAM;
  if (n < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
  return (ssize_t)n;
}

static void stream_free(void *cls) {
  poot__http_stream *s = cls;
  s->done(s->ctx);
  poot_free(s);
}

static enum MHD_Result send_response(struct MHD_Connection *c, poot__http_response *r) {
  struct MHD_Response *resp = NULL;
  if (r->stream.read) {
    poot__http_stream *s = poot_malloc(sizeof *s);
    if (s) {
      *s = r->stream;
      resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s,
                                               stream_free);
      if (!resp) poot_free(s);
    }
    if (!resp) {
      r->stream.done(r->stream.ctx);
      return MHD_NO;
    }
  } else {
    resp = MHD_create_response_from_buffer(r->body_len, r->body ? r->body : (char *)"",
                                           MHD_RESPMEM_MUST_COPY);
    poot_free(r->body);
    r->body = NULL;
    if (!resp) return MHD_NO;
  }
  if (r->content_type) MHD_add_response_header(resp, "Content-Type", r->content_type);
  if (r->header_name) MHD_add_response_header(resp, r->header_name, r->header_value);
  if (r->stream.read) {
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
  }
  enum MHD_Result ok = MHD_queue_response(c, r->status, resp);
  MHD_destroy_response(resp);
  return ok;
}

static void call_handler(poot__http_server *srv, struct MHD_Connection *c, const char *url,
                         const char *method, conn_state *cs, poot__http_response *out) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  poot__http_request req = {
      .method = method,
      .url = url,
      .authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
      .body = cs->body.data ? cs->body.data : "",
      .body_len = cs->body.len,
      .body_too_large = cs->too_large || cs->body.failed,
      .fd = ci ? ci->connect_fd : -1,
  };
  srv->handler(srv->ctx, &req, out);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
  (void)version;
  poot__http_server *srv = cls;
  conn_state *cs = *con_cls;
  if (!cs) {
    cs = poot_calloc(1, sizeof *cs);
    if (!cs) return MHD_NO;
    poot_strbuf_init(&cs->body);
    *con_cls = cs;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > srv->o.max_body_bytes) {
      /* answered before the body is read; the connection then closes */
      cs->too_large = true;
      poot__http_response out = {0};
      call_handler(srv, c, url, method, cs, &out);
      return send_response(c, &out);
    }
    return MHD_YES;
  }
  if (*upload_size) {
    if (!cs->too_large) {
      if (cs->body.len + *upload_size > srv->o.max_body_bytes) {
        cs->too_large = true;
        poot_strbuf_clear(&cs->body);
      } else {
        poot_strbuf_append(&cs->body, upload, *upload_size);
      }
    }
    *upload_size = 0;
    return MHD_YES;
  }
  poot__http_response out = {0};
  call_handler(srv, c, url, method, cs, &out);
  return send_response(c, &out);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  conn_state *cs = *con_cls;
  if (!cs) return;
  poot_strbuf_deinit(&cs->body);
  poot_free(cs);
  *con_cls = NULL;
}

poot_status poot__http_start(const poot__http_options *options, poot__http_handler handler,
                             void *ctx, poot__http_server **out_server) {
  *out_server = NULL;
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options->port);
  if (inet_pton(AF_INET, options->host, &addr.sin_addr) != 1)
    return poot_status_make(POOT_INVALID_ARGUMENT,
                            "serve: host '%s' is not an IPv4 address (like 127.0.0.1 or 0.0.0.0)",
                            options->host);
  poot__http_server *srv = poot_calloc(1, sizeof *srv);
  if (!srv) return poot_status_make(POOT_OUT_OF_MEMORY, "serve: the HTTP server");
  srv->handler = handler;
  srv->ctx = ctx;
  srv->o = *options;
  srv->daemon = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
          MHD_USE_POLL,
      options->port, NULL, NULL, on_access, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned int)options->max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)options->timeout_s,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
  if (!srv->daemon) {
    poot_free(srv);
    return poot_status_make(POOT_IO, "serve: cannot listen on %s:%u (in use, or not allowed)",
                            options->host, (unsigned)options->port);
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
  srv->port = di ? di->port : options->port;
  *out_server = srv;
  return NULL;
}

uint16_t poot__http_port(const poot__http_server *server) { return server->port; }

void poot__http_stop(poot__http_server *server) {
  if (!server) return;
  MHD_stop_daemon(server->daemon);
  poot_free(server);
}
