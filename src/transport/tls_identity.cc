#include "transport/tls_identity.h"

#include <array>
#include <cstdio>
#include <memory>

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "transport/server_probe.h"

namespace shoal::transport {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using SslCtx = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>>;
using Ssl = std::unique_ptr<SSL, Deleter<SSL, SSL_free>>;

// The first OpenSSL error on this thread's queue, as text (and the queue cleared).
std::string opensslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  std::array<char, 256> text{};
  ERR_error_string_n(e, text.data(), text.size());
  return text.data();
}

Status certError(std::string_view step) {
  return internalError("certificate-build-failed",
                       std::string(step) + " failed: " + opensslError());
}

Result<std::string> pemOfCert(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return certError("writing a certificate");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::string> pemOfKey(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return certError("writing a key");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Cert certOfPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

Pkey keyOfPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return Pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

Status addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return certError("making the extension " + value);
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return added == 1 ? Status::ok() : certError("adding the extension " + value);
}

// A certificate for `key` named `commonName`, valid from a minute ago for `validity`, with a
// random 127-bit serial; the issuer name is set by the caller's signing step.
Result<Cert> newCertificate(EVP_PKEY* key, std::string_view commonName,
                            std::chrono::seconds validity) {
  Cert cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return certError("making a certificate");
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), static_cast<int>(serial.size())) != 1)
    return certError("drawing a serial");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(
      BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr)
    return certError("setting the serial");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(validity.count()));
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(commonName.data()),
                                 static_cast<int>(commonName.size()), -1, 0) != 1)
    return certError("naming the certificate");
  if (X509_set_pubkey(cert.get(), key) != 1) return certError("setting the public key");
  return cert;
}

Result<Pkey> newKey() {
  Pkey key(EVP_EC_gen("P-256"));
  if (!key) return certError("generating a P-256 key");
  return key;
}

bool isIpAddress(const std::string& host) {
  std::array<unsigned char, 16> buf{};
  return ::inet_pton(AF_INET, host.c_str(), buf.data()) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf.data()) == 1;
}

// "IP:a,DNS:a,DNS:b": an address is named both ways (see the header).
std::string subjectAltNames(const std::vector<std::string>& hosts) {
  std::string sans;
  auto add = [&](std::string entry) { sans += (sans.empty() ? "" : ",") + std::move(entry); };
  for (const auto& host : hosts) {
    if (isIpAddress(host)) add("IP:" + host);
    add("DNS:" + host);
  }
  return sans;
}

}  // namespace

Result<CertificateAuthority> makeCertificateAuthority(std::string_view commonName,
                                                      std::chrono::seconds validity) {
  SHOAL_ASSIGN_OR_RETURN(Pkey key, newKey());
  SHOAL_ASSIGN_OR_RETURN(Cert cert, newCertificate(key.get(), commonName, validity));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1)
    return certError("setting the issuer");
  SHOAL_RETURN_IF_ERROR(
      addExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  SHOAL_RETURN_IF_ERROR(
      addExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  SHOAL_RETURN_IF_ERROR(addExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return certError("signing the CA");
  CertificateAuthority ca;
  SHOAL_ASSIGN_OR_RETURN(ca.certPem, pemOfCert(cert.get()));
  SHOAL_ASSIGN_OR_RETURN(ca.keyPem, pemOfKey(key.get()));
  return ca;
}

Result<ServerCertificate> issueServerCertificate(const CertificateAuthority& ca,
                                                 const std::vector<std::string>& hosts,
                                                 std::chrono::seconds validity) {
  Cert caCert = certOfPem(ca.certPem);
  Pkey caKey = keyOfPem(ca.keyPem);
  if (!caCert || !caKey || X509_check_private_key(caCert.get(), caKey.get()) != 1) {
    ERR_clear_error();
    return invalidArgument("bad-ca",
                           "the certificate authority's certificate and key do not "
                           "parse or do not belong together");
  }
  if (hosts.empty()) return invalidArgument("bad-ca", "a server certificate needs a host");
  SHOAL_ASSIGN_OR_RETURN(Pkey key, newKey());
  SHOAL_ASSIGN_OR_RETURN(Cert cert, newCertificate(key.get(), hosts.front(), validity));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(caCert.get())) != 1)
    return certError("setting the issuer");
  X509* issuer = caCert.get();
  SHOAL_RETURN_IF_ERROR(addExtension(cert.get(), issuer, NID_basic_constraints, "CA:FALSE"));
  SHOAL_RETURN_IF_ERROR(
      addExtension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature"));
  SHOAL_RETURN_IF_ERROR(addExtension(cert.get(), issuer, NID_ext_key_usage, "serverAuth"));
  SHOAL_RETURN_IF_ERROR(
      addExtension(cert.get(), issuer, NID_subject_alt_name, subjectAltNames(hosts)));
  SHOAL_RETURN_IF_ERROR(addExtension(cert.get(), issuer, NID_authority_key_identifier, "keyid"));
  if (X509_sign(cert.get(), caKey.get(), EVP_sha256()) == 0) return certError("signing");
  ServerCertificate server;
  SHOAL_ASSIGN_OR_RETURN(std::string leaf, pemOfCert(cert.get()));
  server.certPem = leaf + ca.certPem;
  SHOAL_ASSIGN_OR_RETURN(server.keyPem, pemOfKey(key.get()));
  return server;
}

Result<std::vector<std::string>> certificateHosts(std::string_view certPem) {
  Cert cert = certOfPem(certPem);
  if (!cert) return invalidArgument("bad-certificate", "not a PEM certificate");
  std::vector<std::string> hosts;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS) {
      const ASN1_STRING* s = name->d.dNSName;
      hosts.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                         static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      std::array<char, INET6_ADDRSTRLEN> text{};
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (::inet_ntop(family, ASN1_STRING_get0_data(ip), text.data(), text.size()) != nullptr)
        hosts.emplace_back(text.data());
    }
  }
  GENERAL_NAMES_free(names);
  return hosts;
}

Result<std::string> certificateFingerprint(std::string_view pem) {
  Cert cert = certOfPem(pem);
  if (!cert) {
    ERR_clear_error();
    return invalidArgument("bad-certificate", "not a PEM certificate");
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int n = 0;
  if (X509_digest(cert.get(), EVP_sha256(), digest.data(), &n) != 1)
    return certError("hashing the certificate");
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) {
    std::array<char, 3> two{};
    std::snprintf(two.data(), two.size(), "%02x", digest[i]);
    hex += two.data();
  }
  return hex;
}

Result<std::vector<std::string>> fetchPresentedCertificates(const std::string& host, int port,
                                                            std::chrono::milliseconds timeout) {
  const std::string where = host + ":" + std::to_string(port);
  auto probed = probeServerKeepingSocket(host, port, timeout);
  if (!probed.isOk()) {
    return unavailable("broker-unreachable", "cannot read the broker's greeting at " + where +
                                                 ": " + std::string(probed.status().message()));
  }
  if (!probed->info.tlsRequired) {
    return failedPrecondition("tls-not-offered",
                              "the broker at " + where +
                                  " does not require TLS: a cotals:// link refuses a plaintext "
                                  "broker (is this the broker that printed the link?)");
  }
  // The handshake runs blocking, bounded by socket timeouts.
  const int fd = probed->fd();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return certError("making a TLS context");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);  // the caller checks the fingerprint
  Ssl ssl(SSL_new(ctx.get()));
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1) return certError("making a TLS session");
  if (SSL_connect(ssl.get()) != 1) {
    return unavailable("tls-handshake-failed",
                       "the TLS handshake with " + where + " failed: " + opensslError());
  }
  std::vector<std::string> pems;
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl.get());
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    SHOAL_ASSIGN_OR_RETURN(std::string pem, pemOfCert(sk_X509_value(chain, i)));
    pems.push_back(std::move(pem));
  }
  (void)SSL_shutdown(ssl.get());
  return pems;
}

}  // namespace shoal::transport
