agenthropicSearch.shard("b21e6721-3576-431a-bd97-863e111df136", []);
