// The Cotal SPEC §12 conformance vectors, verbatim, for tests, benchmarks and fuzz seeds in
// any module (a test that speaks the wire should use these rather than retype them).
//
// Thread safety: constants only.
// Lifetime: static storage.
#pragma once

#include <string_view>

namespace shoal::wire::spec {

// Sample principals and role.
inline constexpr std::string_view kOwnerA = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
inline constexpr std::string_view kOwnerB = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb";
inline constexpr std::string_view kAlice = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
inline constexpr std::string_view kBob = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob";
inline constexpr std::string_view kRole = "reviewer";

// Subject-parse table.
inline constexpr std::string_view kChatSubject =
    "cotal.main.chat.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice.team.backend";
inline constexpr std::string_view kInstSubject =
    "cotal.main.inst.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
inline constexpr std::string_view kSvcSubject =
    "cotal.main.svc.reviewer.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
// Retired control subject: no sender, must not be handled.
inline constexpr std::string_view kRetiredCtlSubject =
    "cotal.main.ctl.manager.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
// No channel token: no sender, malformed.
inline constexpr std::string_view kChatWithoutChannelSubject =
    "cotal.main.chat.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
// Split-parses (owner = the nkey, actor = team, channel = backend) but must be dropped at the
// surfacing boundary.
inline constexpr std::string_view kNkeyOwner =
    "UAQGWOEVJKMIO4WXSYOTLARXYOZTCXFK67JASEH6AFFFYK6FOPSKQCAD";
inline constexpr std::string_view kNkeyOwnerSubject =
    "cotal.main.chat.UAQGWOEVJKMIO4WXSYOTLARXYOZTCXFK67JASEH6AFFFYK6FOPSKQCAD.team.backend";

// Sample multicast (published on kChatSubject).
inline constexpr std::string_view kMulticast =
    R"({"id":"018f1d0a-0000-7000-9000-000000000001","ts":1710000000000,"space":"main",)"
    R"("from":{"id":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","name":"alice","role":"planner"},)"
    R"("channel":"team.backend","mentions":["bob"],)"
    R"("parts":[{"kind":"text","text":"Can you review this?"}],"contextId":"ctx-1"})";

// Sample unicast (published on kInstSubject).
inline constexpr std::string_view kUnicast =
    R"({"id":"018f1d0a-0000-7000-9000-000000000002","ts":1710000001000,"space":"main",)"
    R"("from":{"id":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","name":"alice"},)"
    R"("to":"u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob","parts":[{"kind":"text","text":"Direct note."}]})";

}  // namespace shoal::wire::spec
