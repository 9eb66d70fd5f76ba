// TLS identity for a broker Shoal runs itself (issue 19, `shoal up --auth --host`): a private
// certificate authority made for one space, the broker's server certificate signed by it, and
// the two checks a joining machine makes before it trusts a broker it has never seen.
//
// Keys are ECDSA P-256 (OpenSSL), certificates X.509 v3 in PEM. The CA signs only; the server
// certificate names every address a client may dial, each as an IP SAN (for addresses) and as
// a DNS SAN (nats.c's expected-hostname check compares DNS names), and `localhost`.
//
// A join link carries the CA's fingerprint (SHA-256 of its DER, lower-case hex). A joiner
// fetches the certificates the broker presents in its TLS handshake
// (`fetchPresentedCertificates`: NATS sends its INFO line in plain text first, then the
// client starts TLS), keeps the one whose fingerprint the link names, and connects with that
// as its only trusted root: a broker that cannot present a chain to it is refused by the TLS
// verification itself.
//
// Thread safety: free functions; no shared state.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace shoal::transport {

struct CertificateAuthority {
  std::string certPem;
  std::string keyPem;  // a secret: 0600 files only
};

struct ServerCertificate {
  std::string certPem;  // the server's certificate followed by the CA's (the chain it presents)
  std::string keyPem;
};

Result<CertificateAuthority> makeCertificateAuthority(std::string_view commonName,
                                                      std::chrono::seconds validity);
// Reasons: bad-ca (the PEMs do not parse or do not match).
Result<ServerCertificate> issueServerCertificate(const CertificateAuthority& ca,
                                                 const std::vector<std::string>& hosts,
                                                 std::chrono::seconds validity);

// The addresses a server certificate names (IP and DNS SANs), in order; `bad-certificate`.
Result<std::vector<std::string>> certificateHosts(std::string_view certPem);

// SHA-256 of the first certificate in `pem`, as 64 lower-case hex characters.
Result<std::string> certificateFingerprint(std::string_view pem);

// The certificates a NATS server at host:port presents in its TLS handshake, as PEMs, leaf
// first. Nothing is verified here (that is the caller's fingerprint check). Reasons:
// `broker-unreachable`, `tls-not-offered` (its INFO does not require TLS: a plaintext
// broker), `tls-handshake-failed`.
Result<std::vector<std::string>> fetchPresentedCertificates(const std::string& host, int port,
                                                            std::chrono::milliseconds timeout);

}  // namespace shoal::transport
