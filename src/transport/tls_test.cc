// TLS for a broker Shoal runs itself: the certificates tls_identity.h makes, a real nats-server
// requiring TLS with them, and the refusals a client meets when the server is not the one its
// trusted root vouches for.
#include "base/file_system.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"
#include "transport/local_broker.h"
#include "transport/tls_identity.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::TempDir;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct TlsBroker {
  TempDir dir;
  CertificateAuthority ca;
  std::string caFile;
  std::unique_ptr<LocalBroker> broker;
};

// A broker whose certificate names `hosts`, signed by a fresh CA written to <dir>/ca.pem.
TlsBroker startTlsBroker(const std::vector<std::string>& hosts) {
  TlsBroker t{std::move(TempDir::create("tls")).value(), {}, {}, {}};
  auto ca = makeCertificateAuthority("shoal test CA", hours(1));
  EXPECT_TRUE(ca.isOk()) << ca.status().toString();
  t.ca = *ca;
  auto server = issueServerCertificate(t.ca, hosts, hours(1));
  EXPECT_TRUE(server.isOk()) << server.status().toString();
  FileSystem& fs = FileSystem::posix();
  t.caFile = t.dir.join("ca.pem");
  EXPECT_TRUE(writeFileAtomically(fs, t.caFile, t.ca.certPem).isOk());
  EXPECT_TRUE(writeFileAtomically(fs, t.dir.join("server.pem"), server->certPem).isOk());
  EXPECT_TRUE(writeFileAtomically(fs, t.dir.join("server-key.pem"), server->keyPem).isOk());
  auto broker = LocalBroker::start({.storeDir = t.dir.join("store"),
                                    .tlsCertFile = t.dir.join("server.pem"),
                                    .tlsKeyFile = t.dir.join("server-key.pem")});
  EXPECT_TRUE(broker.isOk()) << broker.status().toString();
  if (broker.isOk()) t.broker = std::move(broker).value();
  return t;
}

ConnectOptions optionsFor(const LocalBroker& broker, const std::string& caFile) {
  ConnectOptions options;
  options.servers = {broker.url()};
  options.tlsCaFile = caFile;
  options.allowReconnect = false;
  return options;
}

TEST(TlsIdentity, AServerCertificateNamesEveryHostAndChainsToItsCa) {
  auto ca = makeCertificateAuthority("space main", hours(1));
  ASSERT_TRUE(ca.isOk()) << ca.status().toString();
  auto server = issueServerCertificate(*ca, {"10.7.0.1", "broker.example", "localhost"}, hours(1));
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  auto hosts = certificateHosts(server->certPem);
  ASSERT_TRUE(hosts.isOk());
  EXPECT_EQ(*hosts,
            (std::vector<std::string>{"10.7.0.1", "10.7.0.1", "broker.example", "localhost"}));
  // The chain ends with the CA, so a joiner finds the CA's fingerprint among what is presented.
  EXPECT_NE(server->certPem.find(ca->certPem), std::string::npos);
  auto caPrint = certificateFingerprint(ca->certPem);
  auto leafPrint = certificateFingerprint(server->certPem);
  ASSERT_TRUE(caPrint.isOk() && leafPrint.isOk());
  EXPECT_EQ(caPrint->size(), 64u);
  EXPECT_NE(*caPrint, *leafPrint);
  auto other = makeCertificateAuthority("space main", hours(1));
  ASSERT_TRUE(other.isOk());
  EXPECT_NE(*certificateFingerprint(other->certPem), *caPrint) << "a fresh CA is a fresh key";

  CertificateAuthority mismatched{ca->certPem, other->keyPem};
  EXPECT_EQ(issueServerCertificate(mismatched, {"localhost"}, hours(1)).status().reason(),
            "bad-ca");
  EXPECT_EQ(certificateFingerprint("not a certificate").status().reason(), "bad-certificate");
}

TEST(TlsBrokerTest, AClientTrustingTheSpacesCaConnectsOverTls) {
  TlsBroker t = startTlsBroker({"127.0.0.1", "localhost"});
  ASSERT_NE(t.broker, nullptr);
  EXPECT_EQ(t.broker->url().rfind("tls://", 0), 0u) << t.broker->url();
  auto conn = Connection::connect(optionsFor(*t.broker, t.caFile));
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  EXPECT_TRUE((*conn)->flush(seconds(5)).isOk());
}

// nats.c upgrades to TLS when the server requires it, and then verifies the server against the
// system's roots, which do not hold the space's CA.
TEST(TlsBrokerTest, AClientWithoutTheSpacesCaIsRefused) {
  TlsBroker t = startTlsBroker({"127.0.0.1"});
  ASSERT_NE(t.broker, nullptr);
  ConnectOptions plain = optionsFor(*t.broker, "");
  plain.servers = {"nats://127.0.0.1:" + std::to_string(t.broker->port())};
  auto conn = Connection::connect(plain);
  ASSERT_FALSE(conn.isOk());
  EXPECT_EQ(conn.status().reason(), "tls-error") << conn.status().toString();
}

// A broker whose certificate another CA signed, or that names another host, is not ours.
TEST(TlsBrokerTest, AServerTheTrustedRootDoesNotVouchForIsRefused) {
  TlsBroker t = startTlsBroker({"127.0.0.1"});
  ASSERT_NE(t.broker, nullptr);
  auto stranger = makeCertificateAuthority("another", hours(1));
  ASSERT_TRUE(stranger.isOk());
  const std::string strangerFile = t.dir.join("stranger.pem");
  ASSERT_TRUE(writeFileAtomically(FileSystem::posix(), strangerFile, stranger->certPem).isOk());
  auto conn = Connection::connect(optionsFor(*t.broker, strangerFile));
  ASSERT_FALSE(conn.isOk());
  EXPECT_EQ(conn.status().reason(), "tls-error") << conn.status().toString();

  TlsBroker elsewhere = startTlsBroker({"10.99.0.1"});
  ASSERT_NE(elsewhere.broker, nullptr);
  auto wrongName = Connection::connect(optionsFor(*elsewhere.broker, elsewhere.caFile));
  ASSERT_FALSE(wrongName.isOk()) << "the certificate names 10.99.0.1, not 127.0.0.1";
  EXPECT_EQ(wrongName.status().reason(), "tls-error") << wrongName.status().toString();
}

TEST(TlsBrokerTest, AJoinerSeesTheChainTheBrokerPresents) {
  TlsBroker t = startTlsBroker({"127.0.0.1"});
  ASSERT_NE(t.broker, nullptr);
  auto presented = fetchPresentedCertificates("127.0.0.1", t.broker->port(), seconds(5));
  ASSERT_TRUE(presented.isOk()) << presented.status().toString();
  ASSERT_EQ(presented->size(), 2u);
  EXPECT_EQ(*certificateFingerprint(presented->back()), *certificateFingerprint(t.ca.certPem));

  auto dir = TempDir::create("plain");
  ASSERT_TRUE(dir.isOk());
  auto plain = LocalBroker::start({.storeDir = dir->join("store")});
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
  EXPECT_EQ(fetchPresentedCertificates("127.0.0.1", (*plain)->port(), seconds(5)).status().reason(),
            "tls-not-offered");
  EXPECT_EQ(fetchPresentedCertificates("127.0.0.1", 1, milliseconds(500)).status().reason(),
            "broker-unreachable");
}

}  // namespace
}  // namespace shoal::transport
