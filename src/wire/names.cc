#include "wire/names.h"

#include <string>

#include "wire/channel.h"
#include "wire/token.h"

namespace shoal::wire {

namespace {

Status checkPrincipalAndUid(const Principal& p, std::string_view uid) {
  SHOAL_RETURN_IF_ERROR(validatePrincipal(p));
  return validateLifecycleUid(uid);
}

Result<std::string> prefixed(std::string_view prefix, const Principal& p, std::string_view uid) {
  SHOAL_RETURN_IF_ERROR(checkPrincipalAndUid(p, uid));
  std::string out(prefix);
  out += p.owner;
  out += '-';
  out += p.actor;
  out += '-';
  out += uid;
  return out;
}

std::string_view streamPrefix(Stream stream) {
  switch (stream) {
    case Stream::kChat:
      return "CHAT_";
    case Stream::kDm:
      return "DM_";
    case Stream::kTask:
      return "TASK_";
    case Stream::kInbox:
      return "INBOX_";
    case Stream::kDlv:
      return "DLV_";
    case Stream::kWake:
      return "WAKE_";
  }
  return "UNKNOWN_";
}

std::string_view bucketPrefix(Bucket bucket) {
  switch (bucket) {
    case Bucket::kPresence:
      return "cotal_presence_";
    case Bucket::kChannels:
      return "cotal_channels_";
    case Bucket::kMembers:
      return "cotal_members_";
    case Bucket::kAcl:
      return "cotal_acl_";
    case Bucket::kDelivery:
      return "cotal_delivery_";
    case Bucket::kMembership:
      return "cotal_membership_";
    case Bucket::kManager:
      return "cotal_manager_";
    case Bucket::kSeats:
      return "shoal_seats_";
    case Bucket::kMachines:
      return "shoal_machines_";
    case Bucket::kInvites:
      return "shoal_invites_";
  }
  return "cotal_unknown_";
}

}  // namespace

Result<std::string> streamName(Stream stream, std::string_view space) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  return std::string(streamPrefix(stream)) + std::string(space);
}

Result<std::vector<std::string>> streamSubjects(Stream stream, std::string_view space) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  const std::string root = "cotal." + std::string(space) + ".";
  switch (stream) {
    case Stream::kChat:
      return std::vector<std::string>{root + "chat.>"};
    case Stream::kDm:
      return std::vector<std::string>{root + "inst.>"};
    case Stream::kTask:
      return std::vector<std::string>{root + "svc.>"};
    case Stream::kInbox:
      return std::vector<std::string>{root + "dinbox.>"};
    case Stream::kDlv:
      return std::vector<std::string>{root + "dlv.>"};
    case Stream::kWake:
      return std::vector<std::string>{root + "wake.>", root + "rcpt.>"};
  }
  return std::vector<std::string>{};
}

Result<std::string> bucketName(Bucket bucket, std::string_view space) {
  SHOAL_RETURN_IF_ERROR(validateSpace(space));
  return std::string(bucketPrefix(bucket)) + std::string(space);
}

Result<std::string> lifecycleNameForm(const Principal& p, std::string_view lifecycleUid) {
  return prefixed("", p, lifecycleUid);
}

Result<std::string> lifecycleKeyForm(const Principal& p, std::string_view lifecycleUid) {
  SHOAL_RETURN_IF_ERROR(checkPrincipalAndUid(p, lifecycleUid));
  return p.dotForm() + "." + std::string(lifecycleUid);
}

Result<std::string> dmDurable(const Principal& p, std::string_view lifecycleUid) {
  return prefixed("dm_", p, lifecycleUid);
}

Result<std::string> dlvDurable(const Principal& p, std::string_view lifecycleUid) {
  return prefixed("dlv_", p, lifecycleUid);
}

Result<std::string> chathistDurable(const Principal& p, std::string_view lifecycleUid) {
  return prefixed("chathist_", p, lifecycleUid);
}

Result<std::string> dmhistConsumer(const Principal& p, std::string_view lifecycleUid) {
  return prefixed("dmhist_", p, lifecycleUid);
}

Result<std::string> svcDurable(std::string_view role) {
  SHOAL_RETURN_IF_ERROR(validateRole(role));
  return "svc_" + std::string(role);
}

Result<std::string> memberKey(std::string_view channel, const Principal& p,
                              std::string_view lifecycleUid) {
  SHOAL_RETURN_IF_ERROR(validateConcreteChannel(channel));
  SHOAL_ASSIGN_OR_RETURN(std::string key, lifecycleKeyForm(p, lifecycleUid));
  return std::string(channel) + "/" + key;
}

}  // namespace shoal::wire
