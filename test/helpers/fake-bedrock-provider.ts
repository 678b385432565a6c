// The gateway's provider settings for a fake Bedrock (its region and keys), with what a test adds.
import { FAKE_AWS, type FakeBedrock } from "../upstreams/bedrock.ts";

export const fakeBedrockProvider = (bedrock: FakeBedrock, extra: Record<string, unknown> = {}) => ({
  protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: bedrock.baseUrl, ...extra,
});
