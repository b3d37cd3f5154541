/** Example records for the API reference (the request bodies and the listing's items). */
export const exampleV2Record = {
  date: "2026-11-21",
  exchangeId: "binance",
  baseCoinId: "chainlink",
  quoteCoinId: "tether",
  bidDepthTob: 1200.5,
  bidDepth10: 5400,
  bidDepth25: 11800,
  bidDepth50: 24000,
  bidDepth100: 51000,
  bidDepth200: 98000,
  askDepthTob: 1100,
  askDepth10: 5100,
  askDepth25: 12100,
  askDepth50: 25000,
  askDepth100: 49500,
  askDepth200: 101000,
  bidAskDepth50: 49000,
  bidAskDepth100: 100500,
  bidAskDepth200: 199000,
  bidAskSpread: 0.12,
  topOfBookPercentage: 63.5,
  orderFillVolumeMaker: 350000,
  orderFillVolumeTaker: 120000,
  orderFillVolumeMakerTob: 90000,
  instrumentType: "spot",
  type: "project",
};

export const exampleV1Record = {
  date: "2026-11-21",
  exchangeId: "kraken",
  baseCoinId: "chainlink",
  quoteCoinSymbol: "USD",
  bidDepth50: 24000,
  askDepth50: 25000,
  bidAskSpread: 0.3,
};

const { instrumentType: _notListed, ...listed } = exampleV2Record;

export const exampleReportPage = {
  page: 1,
  totalPages: 1,
  totalCount: 1,
  items: [
    {
      ...listed,
      exchangeName: "Binance",
      baseCoinSymbol: "LINK",
      eligibilityStatus: "eligible",
      eligibilityReason: null,
    },
  ],
};
