#include "supervisor/broker_tls.h"

#include <chrono>
#include <vector>

#include "base/file_system.h"
#include "base/owner_only.h"
#include "transport/tls_identity.h"

namespace shoal::supervisor {
namespace {

constexpr std::chrono::hours kCaValidity{24 * 365 * 10};
constexpr std::chrono::hours kServerValidity{24 * 365};

}  // namespace

BrokerTlsFiles brokerTlsFilesOf(const MeshPaths& paths) {
  BrokerTlsFiles files;
  files.dir = paths.secretsDir + "/" + paths.space + "-tls";
  files.caFile = files.dir + "/ca.pem";
  files.caKeyFile = files.dir + "/ca-key.pem";
  files.certFile = files.dir + "/server.pem";
  files.keyFile = files.dir + "/server-key.pem";
  return files;
}

bool spaceUsesTls(const MeshPaths& paths) {
  return FileSystem::posix().exists(brokerTlsFilesOf(paths).caFile);
}

Result<BrokerTlsFiles> ensureBrokerTls(const MeshPaths& paths, const std::string& host) {
  FileSystem& fs = FileSystem::posix();
  const BrokerTlsFiles files = brokerTlsFilesOf(paths);
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(files.dir));
  transport::CertificateAuthority ca;
  if (fs.exists(files.caFile) && fs.exists(files.caKeyFile)) {
    SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(files.caKeyFile));
    SHOAL_ASSIGN_OR_RETURN(ca.certPem, fs.readFile(files.caFile));
    SHOAL_ASSIGN_OR_RETURN(ca.keyPem, fs.readFile(files.caKeyFile));
  } else {
    SHOAL_ASSIGN_OR_RETURN(
        ca, transport::makeCertificateAuthority("shoal space " + paths.space + " CA", kCaValidity));
    // The key first: a CA file without its key would be a space nobody can re-issue for.
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, files.caKeyFile, ca.keyPem));
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, files.caFile, ca.certPem));
  }
  std::vector<std::string> hosts{host};
  for (const char* local : {"127.0.0.1", "localhost"}) {
    if (host != local) hosts.emplace_back(local);
  }
  SHOAL_ASSIGN_OR_RETURN(transport::ServerCertificate server,
                         transport::issueServerCertificate(ca, hosts, kServerValidity));
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, files.keyFile, server.keyPem));
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, files.certFile, server.certPem));
  return files;
}

Result<std::string> brokerCaFingerprint(const MeshPaths& paths) {
  FileSystem& fs = FileSystem::posix();
  const BrokerTlsFiles files = brokerTlsFilesOf(paths);
  if (!fs.exists(files.caFile)) {
    return notFound("no-tls", "space " + paths.space +
                                  " has no TLS certificate authority: its broker runs without "
                                  "TLS (start it with `shoal up --auth --tls` or `--host ADDR`)");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string pem, fs.readFile(files.caFile));
  return transport::certificateFingerprint(pem);
}

}  // namespace shoal::supervisor
