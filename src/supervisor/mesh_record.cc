#include "supervisor/mesh_record.h"

#include <boost/json.hpp>

namespace shoal::supervisor {
namespace json = boost::json;

std::string encodeMeshRecord(const MeshRecord& r) {
  json::object o;
  o["version"] = r.version;
  o["space"] = r.space;
  o["url"] = r.url;
  o["host"] = r.host;
  o["port"] = r.port;
  o["storeDir"] = r.storeDir;
  o["brokerPid"] = r.brokerPid;
  o["supervisorPid"] = r.supervisorPid;
  o["servePid"] = r.servePid;
  o["daemonPid"] = r.daemonPid;
  o["startedAtMs"] = r.startedAtMs;
  o["mode"] = r.mode;
  if (!r.secretFile.empty()) o["secretFile"] = r.secretFile;
  if (!r.caFile.empty()) o["caFile"] = r.caFile;
  return json::serialize(o) + "\n";
}

Result<MeshRecord> decodeMeshRecord(std::string_view text, std::string_view path) {
  auto bad = [&](std::string_view why) {
    return dataLoss("bad-mesh-record", std::string("mesh registry file ") + std::string(path) +
                                           " is unreadable (" + std::string(why) +
                                           "); remove it with `shoal down --force`");
  };
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return bad("not a JSON object");
  const json::object& o = v.get_object();
  MeshRecord r;
  auto str = [&](const char* key, std::string& out) {
    const json::value* f = o.if_contains(key);
    if (f == nullptr || !f->is_string()) return false;
    out = std::string(f->get_string());
    return true;
  };
  auto num = [&](const char* key, int64_t& out) {
    const json::value* f = o.if_contains(key);
    if (f == nullptr || !f->is_int64()) return false;
    out = f->get_int64();
    return true;
  };
  int64_t version = 0;
  int64_t port = 0;
  if (!num("version", version) || version != 1) return bad("missing or unknown version");
  if (!str("space", r.space) || !str("url", r.url) || !str("host", r.host) ||
      !str("storeDir", r.storeDir) || !str("mode", r.mode)) {
    return bad("missing a string field");
  }
  if (!num("port", port) || port <= 0 || port > 65535 || !num("brokerPid", r.brokerPid) ||
      !num("supervisorPid", r.supervisorPid) || !num("startedAtMs", r.startedAtMs)) {
    return bad("missing a number field");
  }
  if (o.contains("servePid") && !num("servePid", r.servePid)) return bad("bad servePid");
  if (o.contains("daemonPid") && !num("daemonPid", r.daemonPid)) return bad("bad daemonPid");
  if (o.contains("secretFile") && !str("secretFile", r.secretFile)) return bad("bad secretFile");
  if (o.contains("caFile") && !str("caFile", r.caFile)) return bad("bad caFile");
  r.port = static_cast<int>(port);
  return r;
}

Result<MeshRecord> readMeshRecord(FileSystem& fs, const std::string& path) {
  auto text = fs.readFile(path);
  if (!text.isOk()) return text.status();
  return decodeMeshRecord(*text, path);
}

Status writeMeshRecord(FileSystem& fs, const std::string& path, const MeshRecord& record) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    auto made = fs.createDirs(path.substr(0, slash));
    if (!made.isOk()) return made.status();
  }
  return writeFileAtomically(fs, path, encodeMeshRecord(record));
}

}  // namespace shoal::supervisor
