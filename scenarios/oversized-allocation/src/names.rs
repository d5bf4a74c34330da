vocabulary! {
    check MATCHES = "output matches the CPU reference";
    fact BATCH_SIZE = "batch size";
    fact FREE_MEMORY_LEFT_FOR_THE_BATCH = "free memory left for the batch";
    fact THE_ARTICLE_S_4_GIB_ALLOCATION_SUCCEEDS = "the article's 4 GiB allocation succeeds";
    fact TILES = "tiles";
    fact USABLE = "context usable after the failed allocation";
    measure FREE_FOR_THE_BATCH = "free_for_the_batch" in Bytes;
    measure TILES_COUNT = "tiles" in Count;
    measure TILE_BYTES = "tile_bytes" in Bytes;
}
