#include "net/http_url.h"

#include "gtest/gtest.h"

namespace brigade::net {
namespace {

TEST(ParseHttpUrlTest, AcceptsHostPortPathAndIpv6) {
  const HttpUrl a = *ParseHttpUrl("http://collector:4318/v1/traces");
  EXPECT_EQ(a.host, "collector");
  EXPECT_EQ(a.port, 4318);
  EXPECT_EQ(a.target, "/v1/traces");
  const HttpUrl b = *ParseHttpUrl("http://[::1]:9/x?y=1");
  EXPECT_EQ(b.host, "::1");
  EXPECT_EQ(b.port, 9);
  EXPECT_EQ(b.target, "/x?y=1");
  EXPECT_EQ(ParseHttpUrl("http://host")->port, 80);
  EXPECT_EQ(ParseHttpUrl("http://host")->target, "/");
  EXPECT_FALSE(ParseHttpUrl("https://host/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://:80/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://host:99999/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://host:x/").ok());
}

}  // namespace
}  // namespace brigade::net
