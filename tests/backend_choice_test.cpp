// The `--backend` decision, with hand-made candidates: no plugin is loaded.
#include "frontend/backend_choice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cordon/claims.h"
#include "frontend/backend_catalog.h"

namespace cordon::frontend {
namespace {

Capabilities with_isolation(int aspects_enforced, Enforcement memory = Enforcement::kNone,
                            Enforcement cpu = Enforcement::kNone) {
  Capabilities caps;
  for (const Aspect aspect : kAllAspects) {
    Capability capability;
    capability.aspect = aspect;
    caps.aspects.push_back(capability);
  }
  for (int i = 0; i < aspects_enforced; ++i) {
    const Aspect aspect = kIsolationAspects[i];
    for (Capability& capability : caps.aspects) {
      if (capability.aspect == aspect) capability.enforcement = Enforcement::kEnforced;
    }
  }
  for (Capability& capability : caps.aspects) {
    if (capability.aspect == Aspect::kMemory) capability.enforcement = memory;
    if (capability.aspect == Aspect::kCpu) capability.enforcement = cpu;
  }
  return caps;
}

BackendCandidate candidate(std::string name, bool available, Capabilities caps,
                           std::string reason = {}) {
  return BackendCandidate{std::move(name), "1.0", available, std::move(reason), std::move(caps)};
}

const std::vector<BackendCandidate> kOnlySubprocess = {
    candidate("subprocess", true, with_isolation(0))};

TEST(BackendChoiceTest, AutoPicksTheMostIsolatingAvailable) {
  const std::vector<BackendCandidate> candidates = {
      candidate("subprocess", true, with_isolation(0)),
      candidate("namespace", true, with_isolation(4)),
      candidate("container", false, with_isolation(4, Enforcement::kEnforced), "no runc"),
      candidate("partial", true, with_isolation(2)),
  };
  const auto choice = choose_backend(candidates, "auto", /*allow_unisolated=*/false);
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_EQ(choice->name, "namespace");
  EXPECT_TRUE(choice->isolates);
}

// A run with a network allow-list (issue #16): only a backend whose network claim carries a
// list is a candidate, whatever else it enforces; the others say why.
TEST(BackendChoiceTest, AnAllowListTakesOnlyABackendThatCarriesOne) {
  Capabilities proxy = with_isolation(4);
  for (Capability& c : proxy.aspects) {
    if (c.aspect == Aspect::kNetwork) c = network_namespace_claim(true, "lo only", true);
  }
  Capabilities no_proxy = with_isolation(4, Enforcement::kEnforced);
  for (Capability& c : no_proxy.aspects) {
    if (c.aspect == Aspect::kNetwork) c = network_namespace_claim(true, "lo only", false);
  }
  const std::vector<BackendCandidate> candidates = for_allow_list({
      candidate("container", true, no_proxy),
      candidate("namespace", true, proxy),
      candidate("subprocess", true, with_isolation(0)),
  });
  EXPECT_FALSE(candidates[0].available);
  EXPECT_EQ(candidates[0].reason, "it cannot carry a network allow-list (--allow-net)");
  EXPECT_TRUE(candidates[1].available);
  EXPECT_FALSE(candidates[2].available);
  const auto choice = choose_backend(candidates, "auto", /*allow_unisolated=*/true);
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_EQ(choice->name, "namespace");
  const auto named = choose_backend(candidates, "container", false);
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().message.find("cannot carry a network allow-list"), std::string::npos);
  // Without namespace, auto finds none rather than one that would drop the list.
  EXPECT_FALSE(choose_backend({candidates[0], candidates[2]}, "auto", true));
}

TEST(BackendChoiceTest, TiesBrokenByTheOtherAspects) {
  const std::vector<BackendCandidate> candidates = {
      candidate("plain", true, with_isolation(4)),
      candidate("capped", true, with_isolation(4, Enforcement::kEnforced)),
  };
  const auto choice = choose_backend(candidates, "auto", false);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->name, "capped");
}

// What this host lists: container's CPU bandwidth share is partial, namespace has none;
// both enforce everything else. The plugins are found in name order (container first).
TEST(BackendChoiceTest, EquallyStrongBackendsGoInTheFixedOrderNamespaceFirst) {
  const BackendCandidate container = candidate(
      "container", true, with_isolation(4, Enforcement::kEnforced, Enforcement::kPartial));
  const BackendCandidate ns =
      candidate("namespace", true, with_isolation(4, Enforcement::kEnforced));
  const BackendCandidate sub = candidate("subprocess", true, with_isolation(0));
  for (const auto& candidates :
       {std::vector{container, ns, sub}, std::vector{sub, ns, container}}) {
    const auto choice = choose_backend(candidates, "auto", false);
    ASSERT_TRUE(choice) << choice.error().message;
    EXPECT_EQ(choice->name, "namespace");
    EXPECT_EQ(choice->reason,
              "auto chose namespace: enforces all 4 isolation aspects, 5 of 11 aspects in all; "
              "container is equally strong, and namespace comes first in the fixed order "
              "(namespace, container, then by name)");
  }
  // Others come after the fixed ones, by name.
  const auto other = choose_backend(
      {candidate("zeta", true, with_isolation(4)), candidate("alpha", true, with_isolation(4)),
       candidate("container", true, with_isolation(4))},
      "auto", false);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->name, "container");
  const auto by_name = choose_backend(
      {candidate("zeta", true, with_isolation(4)), candidate("alpha", true, with_isolation(4))},
      "auto", false);
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->name, "alpha");
}

TEST(BackendChoiceTest, TheReasonSaysWhatTheNextBestLacks) {
  const auto choice = choose_backend({candidate("container", true, with_isolation(4)),
                                      candidate("namespace", true, with_isolation(3))},
                                     "auto", false);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->name, "container");
  EXPECT_EQ(choice->reason,
            "auto chose container: enforces all 4 isolation aspects, 4 of 11 aspects in all; "
            "the next, namespace, enforces 3 of 4 isolation aspects, 3 of 11 aspects in all");
  const auto only =
      choose_backend({candidate("namespace", true, with_isolation(4))}, "auto", false);
  ASSERT_TRUE(only);
  EXPECT_NE(only->reason.find("the only available backend"), std::string::npos) << only->reason;
  const auto named =
      choose_backend({candidate("namespace", true, with_isolation(4))}, "namespace", false);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->reason, "named with --backend");
}

TEST(BackendChoiceTest, AutoFailsClosedNamingWhatIsMissing) {
  const std::vector<BackendCandidate> candidates = {
      candidate("subprocess", true, with_isolation(0)),
      candidate("halfway", true, with_isolation(2)),
  };
  const auto choice = choose_backend(candidates, "auto", false);
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().code, ErrorCode::kUnavailable);
  const std::string& message = choice.error().message;
  EXPECT_NE(message.find("'halfway'"), std::string::npos) << message;
  // The first two isolation aspects are enforced; the message names the other two only.
  EXPECT_EQ(message.find(std::string(to_string(kIsolationAspects[0])) + ","), std::string::npos)
      << message;
  EXPECT_NE(message.find(to_string(kIsolationAspects[2])), std::string::npos) << message;
  EXPECT_NE(message.find(to_string(kIsolationAspects[3])), std::string::npos) << message;
  EXPECT_NE(message.find("--allow-unisolated"), std::string::npos) << message;
  EXPECT_NE(message.find("available backends: subprocess, halfway"), std::string::npos) << message;
}

TEST(BackendChoiceTest, AllowUnisolatedTakesTheBestAnyway) {
  const auto choice = choose_backend(kOnlySubprocess, "auto", /*allow_unisolated=*/true);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->name, "subprocess");
  EXPECT_FALSE(choice->isolates);
}

TEST(BackendChoiceTest, NamingAnUnisolatedBackendIsAnInformedChoice) {
  const auto choice = choose_backend(kOnlySubprocess, "subprocess", false);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->name, "subprocess");
}

TEST(BackendChoiceTest, UnknownNameListsTheAvailable) {
  const auto choice = choose_backend(kOnlySubprocess, "docker", false);
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(choice.error().message, "unknown backend 'docker'; available backends: subprocess");
}

TEST(BackendChoiceTest, ALoadedDuplicateWinsOverAShadowedOne) {
  const std::vector<BackendCandidate> candidates = {
      candidate("subprocess", false, {}, "shadowed by /elsewhere"),
      candidate("subprocess", true, with_isolation(0)),
  };
  EXPECT_TRUE(choose_backend(candidates, "subprocess", false));
}

// gVisor (issue #18) is listed as "container (runsc)", a variant of the container plugin:
// `auto` never picks it, however strong its declaration; it is chosen by its label, or by
// the plugin's name when the plugin made that one entry (`-b container --runtime runsc`).
TEST(BackendChoiceTest, AVariantIsChosenOnlyWhenNamed) {
  BackendCandidate gvisor = candidate(
      "container (runsc)", true, with_isolation(4, Enforcement::kEnforced, Enforcement::kEnforced));
  gvisor.plugin = "container";
  gvisor.opt_in = true;
  const std::vector<BackendCandidate> candidates = {candidate("namespace", true, with_isolation(4)),
                                                    gvisor};
  const auto automatic = choose_backend(candidates, "auto", false);
  ASSERT_TRUE(automatic) << automatic.error().message;
  EXPECT_EQ(automatic->name, "namespace");
  EXPECT_EQ(automatic->reason.find("runsc"), std::string::npos) << automatic->reason;

  const auto by_label = choose_backend(candidates, "container (runsc)", false);
  ASSERT_TRUE(by_label) << by_label.error().message;
  EXPECT_EQ(by_label->name, "container (runsc)");
  const auto by_plugin = choose_backend(candidates, "container", false);
  ASSERT_TRUE(by_plugin) << by_plugin.error().message;
  EXPECT_EQ(by_plugin->name, "container (runsc)");

  // With the plain entry listed too, the plugin's name is that one, never the variant.
  BackendCandidate runc = candidate("container", true, with_isolation(4));
  runc.plugin = "container";
  const std::vector<BackendCandidate> both = {runc, gvisor};
  const auto plain = choose_backend(both, "container", false);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->name, "container");
  // Only a variant, alone, is not chosen by auto: nothing else is there.
  EXPECT_FALSE(choose_backend({gvisor}, "auto", false));
}

TEST(BackendChoiceTest, UnavailableNameSaysWhy) {
  const std::vector<BackendCandidate> candidates = {
      candidate("subprocess", true, with_isolation(0)),
      candidate("container", false, with_isolation(4), "runc not found"),
  };
  const auto choice = choose_backend(candidates, "container", false);
  ASSERT_FALSE(choice);
  EXPECT_NE(choice.error().message.find("runc not found"), std::string::npos);
  EXPECT_NE(choice.error().message.find("available backends: subprocess"), std::string::npos);
}

TEST(BackendChoiceTest, NothingAvailable) {
  const auto none = choose_backend({}, "auto", true);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no backend is available"), std::string::npos);
  EXPECT_EQ(available_backend_list({}), "none");
  const auto unavailable =
      choose_backend({candidate("x", false, with_isolation(4), "broken")}, "auto", true);
  ASSERT_FALSE(unavailable);
}

TEST(BackendChoiceTest, MissingIsolationListsEveryAspectNotFullyEnforced) {
  EXPECT_EQ(missing_isolation(with_isolation(4)), "");
  EXPECT_EQ(missing_isolation(with_isolation(0)), "network, filesystem, environment, process_tree");
}

}  // namespace
}  // namespace cordon::frontend
