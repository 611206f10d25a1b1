"""The production sources (log folders, Phoenix projects, span exports) behind one resource, read
with the configuration's ``production`` section by the assets and the sensor alike."""

import dagster as dg

from rag_eval_pipeline.defs.resources.settings import SettingsResource
from rag_eval_pipeline.production.interactions import ReadInteractions
from rag_eval_pipeline.production.settings import ProductionSettings
from rag_eval_pipeline.production.sources import read_sources


class ProductionResource(dg.ConfigurableResource):
    """Reads the agent's real interactions: one day of them (an asset partition) or every day
    (the sensor, which materializes a day when its rows arrive or change)."""

    settings: SettingsResource

    @property
    def production(self) -> ProductionSettings:
        return self.settings.section("production", "README: Production sampling")

    def read_day(self, day: str) -> ReadInteractions:
        return read_sources(self.production, day)

    def read_all(self) -> ReadInteractions:
        return read_sources(self.production)
