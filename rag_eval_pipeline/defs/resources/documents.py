"""The user's documents folder, read with the configuration's rules by the asset and the sensor."""

from pathlib import Path

import dagster as dg

from rag_eval_pipeline.data.documents import Chunking, LoadedDocuments, load_documents
from rag_eval_pipeline.data.images import ImageCatalog, image_catalog
from rag_eval_pipeline.defs.resources.settings import SettingsResource


class DocumentsResource(dg.ConfigurableResource):
    """The folder of the user's documents (.md, .txt, JSONL or parquet of {title, passage})
    merged into the knowledge base, chunked and size-limited as ``dataset`` says; the
    new-documents sensor reads it through the same ``load`` as the asset."""

    settings: SettingsResource

    @property
    def folder(self) -> Path:
        return Path(self.settings.settings.dataset.documents)

    @property
    def chunking(self) -> Chunking:
        chunking = self.settings.settings.dataset.chunking
        return Chunking(chunking.size, chunking.overlap)

    def images(self) -> ImageCatalog:
        """The folder's images, decoded once (``data/images.py``)."""
        return image_catalog(self.folder)

    def load(self) -> LoadedDocuments:
        dataset = self.settings.settings.dataset
        return load_documents(
            self.folder, self.chunking, int(dataset.max_file_mb * 1e6), dataset.language, dataset.encoding
        )
