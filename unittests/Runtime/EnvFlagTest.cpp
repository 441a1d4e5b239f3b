//===- EnvFlagTest.cpp - on/off switches read from the environment --------===//

#include "memopt/runtime/EnvFlag.h"
#include "memopt/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace memopt::runtime;

namespace {

constexpr const char *kName = "MEMOPT_ENVFLAG_TEST";

TEST(EnvFlagTest, UnsetGivesTheFallback) {
  ::unsetenv(kName);
  EXPECT_TRUE(envFlag(kName, true));
  EXPECT_FALSE(envFlag(kName, false));
}

TEST(EnvFlagTest, ZeroAndOne) {
  ::setenv(kName, "1", 1);
  EXPECT_TRUE(envFlag(kName, false));
  ::setenv(kName, "0", 1);
  EXPECT_FALSE(envFlag(kName, true));
  ::unsetenv(kName);
}

TEST(EnvFlagTest, AnythingElseIsAnErrorNamingTheValue) {
  for (const char *bad : {"yes", "", "true", "2", " 1"}) {
    ::setenv(kName, bad, 1);
    try {
      envFlag(kName, false);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_EQ(std::string(e.what()),
                std::string(kName) + " must be 0 or 1, got '" + bad + "'");
    }
  }
  ::unsetenv(kName);
}

} // namespace
