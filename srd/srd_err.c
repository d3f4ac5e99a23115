/*
 * srd_err.c: error descriptions.
 */
#include <srd/srd.h>

const char *srd_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
  case SRD_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case SRD_ERR_NOBUF:
    return "output buffer too small";
  case SRD_ERR_PROTO:
    return "malformed or unexpected packet";
  case SRD_ERR_AGAIN:
    return "no free slot, poll completions and retry";
  case SRD_ERR_MSG_TOO_LONG:
    return "message too long";
  case SRD_ERR_BAD_PEER:
    return "no such peer";
  case SRD_ERR_PEER_UNRESPONSIVE:
    return "peer unresponsive (retry budget exhausted)";
  case SRD_ERR_PEER_UNREACHABLE:
    return "peer unreachable (handshake never answered)";
  case SRD_ERR_RNR:
    return "receiver not ready (RNR retry budget exhausted)";
  case SRD_ERR_PEER_RESET:
    return "peer restarted with the message in flight";
  case SRD_ERR_CANCELED:
    return "canceled";
  case SRD_ERR_TRUNCATED:
    return "receive buffer too small (message truncated)";
  case SRD_ERR_REMOTE_TRUNCATED:
    return "receiver's buffer too small";
  case SRD_ERR_ABORTED:
    return "sender abandoned the message";
  case SRD_ERR_STALE:
    return "packet of another incarnation";
  case SRD_ERR_NOMEM:
    return "out of memory";
  default:
    return "unknown error";
  }
}

int srd_err_is_fatal(int err) {
  return err < SRD_ERR_FATAL;
}
